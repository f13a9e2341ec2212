package skills

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantErr  string
		wantLine int
		check    func(t *testing.T, fm Frontmatter, body string)
	}{
		{
			name: "full",
			in:   "---\nname: pdf-forms\ndescription: Fill PDF forms.\nlicense: MIT\nallowed-tools: Bash(git:*) Read\nmetadata:\n  author: me\n  version: 2\nuser-invocable: true\n---\n\n# Body\ntext\n",
			check: func(t *testing.T, fm Frontmatter, body string) {
				if fm.Name != "pdf-forms" || fm.Description != "Fill PDF forms." || fm.License != "MIT" {
					t.Errorf("fm = %+v", fm)
				}
				if len(fm.AllowedTools) != 2 || fm.AllowedTools[0] != "Bash(git:*)" {
					t.Errorf("allowed tools = %v", fm.AllowedTools)
				}
				if fm.Metadata["author"] != "me" || fm.Metadata["version"] != "2" {
					t.Errorf("metadata = %v", fm.Metadata)
				}
				if fm.Extra["user-invocable"] != true {
					t.Errorf("extra fields not kept: %v", fm.Extra)
				}
				if body != "# Body\ntext\n" {
					t.Errorf("body = %q", body)
				}
			},
		},
		{name: "crlf and bom", in: "\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nbody", check: func(t *testing.T, fm Frontmatter, body string) {
			if fm.Name != "a" || body != "body" {
				t.Errorf("fm=%+v body=%q", fm, body)
			}
		}},
		{name: "no frontmatter", in: "# hello\n", wantErr: "missing YAML frontmatter", wantLine: 1},
		{name: "not closed", in: "---\nname: a\ndescription: b\n", wantErr: "not closed", wantLine: 1},
		{name: "missing name", in: "---\ndescription: b\n---\n", wantErr: `no "name" field`, wantLine: 1},
		{name: "missing description", in: "---\nname: a\n---\n", wantErr: `no "description"`},
		{name: "bad yaml", in: "---\nname: a\ndescription: b\nfoo: [unclosed\n---\n", wantErr: "invalid YAML", wantLine: 4},
		{name: "bad name chars", in: "---\nname: My Skill\ndescription: b\n---\n", wantErr: "lowercase", wantLine: 2},
		{name: "name too long", in: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: b\n---\n", wantErr: "limit is 64", wantLine: 2},
		{name: "description too long", in: "---\nname: a\n\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", wantErr: "limit is 1024", wantLine: 4},
		{name: "name not a string", in: "---\nname: [a]\ndescription: b\n---\n", wantErr: "must be a string", wantLine: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm, body, err := Parse("x/SKILL.md", []byte(tc.in))
			if tc.wantErr != "" {
				var pe *ParseError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ParseError containing %q", err, tc.wantErr)
				}
				if tc.wantLine != 0 && pe.Line != tc.wantLine {
					t.Fatalf("line = %d, want %d (%v)", pe.Line, tc.wantLine, err)
				}
				if !strings.HasPrefix(err.Error(), "x/SKILL.md:") {
					t.Fatalf("error does not name the file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, fm, body)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("---\nname: a\ndescription: b\n---\nbody")
	f.Add("---\nname: a\ndescription: |\n  multi\n  line\nmetadata: {k: v}\n---\n")
	f.Add("---\n---\n")
	f.Add("---\nname: &x a\ndescription: *x\n---")
	f.Add("---\r\nname: a\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		fm, _, err := Parse("f/SKILL.md", []byte(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %T %v", err, err)
			}
			return
		}
		if !nameRE.MatchString(fm.Name) || len(fm.Name) > MaxNameLen {
			t.Fatalf("accepted bad name %q", fm.Name)
		}
		if fm.Description == "" || len([]rune(fm.Description)) > MaxDescriptionLen {
			t.Fatalf("accepted bad description %q", fm.Description)
		}
	})
}
