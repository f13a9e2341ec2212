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
		{name: "missing name: the folder's", in: "---\ndescription: b\n---\n", check: func(t *testing.T, fm Frontmatter, _ string) {
			if fm.Name != "x" {
				t.Errorf("name = %q, want the folder's", fm.Name)
			}
		}},
		{name: "missing description: the body's first paragraph", in: "---\nname: a\n---\n# Title\n\nDoes a thing\nwell.\n\nMore.\n", check: func(t *testing.T, fm Frontmatter, _ string) {
			if fm.Description != "Does a thing well." {
				t.Errorf("description = %q", fm.Description)
			}
		}},
		{name: "no description at all", in: "---\nname: a\n---\n", wantErr: "description is empty"},
		{name: "description too long: truncated with a warning", in: "---\nname: a\n\ndescription: " + strings.Repeat("d", 1068) + "\n---\n", check: func(t *testing.T, fm Frontmatter, _ string) {
			if n := len([]rune(fm.Description)); n != MaxDescriptionLen || len(fm.Warnings) != 1 || !strings.Contains(fm.Warnings[0], "1068 characters; truncated") {
				t.Errorf("description %d runes, warnings %v", n, fm.Warnings)
			}
		}},
		{name: "comma-separated allowed-tools", in: "---\nname: a\ndescription: b\nallowed-tools: Read, Grep, Bash(git add:*)\ndisable-model-invocation: true\n---\n", check: func(t *testing.T, fm Frontmatter, _ string) {
			if strings.Join(fm.AllowedTools, "|") != "Read|Grep|Bash(git add:*)" || !fm.DisableModelInvocation {
				t.Errorf("allowed tools = %q, disabled = %v", fm.AllowedTools, fm.DisableModelInvocation)
			}
		}},
		{name: "listed allowed-tools", in: "---\nname: a\ndescription: b\nallowed-tools:\n  - Read\n  - Write\n---\n", check: func(t *testing.T, fm Frontmatter, _ string) {
			if strings.Join(fm.AllowedTools, "|") != "Read|Write" {
				t.Errorf("allowed tools = %q", fm.AllowedTools)
			}
		}},
		{name: "bad yaml", in: "---\nname: a\ndescription: b\nfoo: [unclosed\n---\n", wantErr: "invalid YAML", wantLine: 4},
		{name: "bad name chars", in: "---\nname: My Skill\ndescription: b\n---\n", wantErr: "lowercase", wantLine: 2},
		{name: "name too long", in: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: b\n---\n", wantErr: "limit is 64", wantLine: 2},
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
