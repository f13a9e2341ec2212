package cmd

import (
	"io"
	"text/tabwriter"
)

// newTable is the column layout every listing command uses (two spaces between
// columns). Sanitizing is the caller's: wrap w in termtext.NewWriter for repository
// or database text.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 2, 4, 2, ' ', 0) }
