//go:build !unix

package providertest

import "time"

func cpuTime() time.Duration { return 0 }
