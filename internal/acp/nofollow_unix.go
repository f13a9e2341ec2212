//go:build unix

package acp

import "syscall"

// oNoFollow refuses a symlink swapped in between the check and the open.
const oNoFollow = syscall.O_NOFOLLOW
