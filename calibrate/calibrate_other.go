//go:build !linux

package calibrate

import (
	"context"

	"mdk/tier"
)

// Run measures the tier (Linux only).
func Run(ctx context.Context, o Options) (*tier.Tier, error) { return nil, ErrNotSupported }
