//go:build !unix

package sandbox

import "errors"

func execve(string, []string, []string) error {
	return errors.New("the sandbox helper needs a Unix system")
}
