package errs

import (
	"errors"
	"testing"
)

func TestErrorText(t *testing.T) {
	sentinel := errors.New("not found")
	tests := []struct {
		err  *Error
		want string
	}{
		{Wrap(KindNotFound, sentinel, "run x not found", ""), "run x not found"},
		{Wrap(KindStore, errors.New("disk full"), "saving run x", ""), "saving run x: disk full"},
		{New(KindUsage, "bad flag", "hint"), "bad flag"},
		{Wrap(KindInternal, errors.New("boom"), "", ""), "boom"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if e := Wrap(KindNotFound, sentinel, "run x not found", ""); !errors.Is(e, sentinel) || ExitCode(e) != 2 {
		t.Error("the sentinel must stay in the chain")
	}
}
