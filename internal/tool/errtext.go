package tool

import "github.com/lovia-dev/lovia/internal/errs"

// ErrorText is what the model reads of an error: the cause and, when the error names
// one (an errs hint), the fix, as a person at the terminal would see them.
func ErrorText(err error) string {
	if h := errs.HintOf(err); h != "" {
		return err.Error() + "\nhint: " + h
	}
	return err.Error()
}
