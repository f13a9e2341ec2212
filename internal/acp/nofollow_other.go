//go:build !unix

package acp

// oNoFollow: no such flag here; the Lstat check before the open stands alone.
const oNoFollow = 0
