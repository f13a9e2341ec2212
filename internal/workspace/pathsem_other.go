//go:build !windows

package workspace

// hostWinPaths is only used on Windows (NewPolicy); elsewhere tests use winPaths
// directly, without short-name expansion.
func hostWinPaths() winPaths { return winPaths{} }
