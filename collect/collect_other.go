//go:build !linux

package collect

import (
	"errors"
	"time"
)

// platformSupported: idle page tracking exists only on Linux; NewRecorder
// returns ErrNotSupported elsewhere.
const platformSupported = false

var errSearch = errors.New("no such process")

func cpuTime() time.Duration { return 0 }
