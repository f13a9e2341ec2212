package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lovia-dev/lovia/internal/errs"
)

// A cases file that is an alias bomb is refused before decoding, naming the file.
func TestCasesAliasBomb(t *testing.T) {
	s := "x0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
	for i := 1; i <= 9; i++ {
		s += fmt.Sprintf("x%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	path := filepath.Join(t.TempDir(), "cases.yaml")
	os.WriteFile(path, []byte(s+"cases: [{input: hi, checks: [{contains: x}]}]\n"), 0o644)
	_, err := Load(path)
	if err == nil || errs.ExitCode(err) != 2 || !strings.Contains(err.Error(), path+":") || !strings.Contains(err.Error(), "aliases expand to more than 100000 nodes") {
		t.Errorf("err %v", err)
	}
}
