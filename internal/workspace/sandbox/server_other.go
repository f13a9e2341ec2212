//go:build !unix

package sandbox

import (
	"fmt"
	"io"
	"os"
)

// ServeFlag as the first helper argument selects the server mode.
const ServeFlag = "--serve"

func serve(_ *os.File, stderr io.Writer, _ bool, _ Report) int {
	fmt.Fprintln(stderr, "lovia sandbox: the exec server needs a Unix system")
	return 126
}
