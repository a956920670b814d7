//go:build !linux

package calibrate

import (
	"context"
	"fmt"

	"mdk/linux"
	"mdk/tier"
)

// Run measures the tier (Linux only): elsewhere it returns an error
// wrapping linux.ErrNotSupported.
func Run(ctx context.Context, o Options) (*tier.Tier, error) {
	return nil, fmt.Errorf("calibrate: %w", linux.Supported())
}
