//go:build !linux

package sandbox

func helperUnderMaskedProc() int { return 2 }
