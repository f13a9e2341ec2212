package tool

import (
	"errors"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

// TestErrorTextCarriesHint: the model reads a failed tool's cause and, when the
// error names one, its fix.
func TestErrorTextCarriesHint(t *testing.T) {
	if got := ErrorText(errors.New("boom")); got != "boom" {
		t.Errorf("plain error: %q", got)
	}
	err := errs.Wrap(errs.KindStore, errors.New("file is not a database"), "open the memory database /h/memory.db", "move it aside")
	if got, want := ErrorText(err), "open the memory database /h/memory.db: file is not a database\nhint: move it aside"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
