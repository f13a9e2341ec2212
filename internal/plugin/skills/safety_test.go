//go:build unix

package skills

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// In a repository, a SKILL.md (or a whole skill folder) that links out of it, a FIFO
// SKILL.md, or an alias bomb in the front matter is a problem naming the file; the
// other skills load. Outside the repository (the user's own skills) a symlinked
// folder is the user's choice and loads.
func TestProjectSkillsStayInTheRepository(t *testing.T) {
	elsewhere := t.TempDir()
	secretDir := writeSkill(t, elsewhere, "stolen", "d", "CANARY-BODY")
	repo := t.TempDir()
	root := filepath.Join(repo, ".lovia", "skills")
	writeSkill(t, root, "good", "fine", "body")
	linked := filepath.Join(root, "linked-file")
	os.MkdirAll(linked, 0o755)
	if err := os.Symlink(filepath.Join(secretDir, "SKILL.md"), filepath.Join(linked, "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretDir, filepath.Join(root, "linked-folder")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(root, "fifo")
	os.MkdirAll(fifo, 0o755)
	if err := syscall.Mkfifo(filepath.Join(fifo, "SKILL.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(root, "bomb")
	os.MkdirAll(bomb, 0o755)
	var b strings.Builder
	b.WriteString("---\nname: bomb\ndescription: d\na0: &a0 [x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i <= 9; i++ {
		r := strings.Repeat(",*a"+string(rune('0'+i-1)), 9)[1:]
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + r + "]\n")
	}
	b.WriteString("---\nbody\n")
	os.WriteFile(filepath.Join(bomb, "SKILL.md"), []byte(b.String()), 0o644)

	var warned []string
	list, problems := List(context.Background(), Config{Dirs: []string{root}, Repo: repo, Warn: func(m string) { warned = append(warned, m) }})
	if len(list) != 1 || list[0].Name != "good" {
		t.Errorf("list = %v", list)
	}
	text := ""
	for _, p := range problems {
		text += p.Error() + "\n"
	}
	for _, want := range []string{
		filepath.Join(linked, "SKILL.md") + " links outside",
		"skill folder " + filepath.Join(root, "linked-folder") + " links outside the repository",
		filepath.Join(fifo, "SKILL.md") + " is a FIFO",
		"aliases expand to more than 100000 nodes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "CANARY") {
		t.Error("a refused file's content reached a problem")
	}

	// The user's own skill directory may hold a symlinked folder.
	user := t.TempDir()
	if err := os.Symlink(secretDir, filepath.Join(user, "shared")); err != nil {
		t.Fatal(err)
	}
	list, problems = List(context.Background(), Config{Dirs: []string{user}, Repo: repo})
	if len(list) != 1 || len(problems) != 0 {
		t.Errorf("user dir: %v %v", list, problems)
	}
}

// A repository skill's files are read under the workspace's read rules: a skill
// folder that links to the repository root cannot hand read_skill_file a .env the
// rules deny, nor a SKILL.md that is such a file.
func TestProjectSkillFilesFollowReadRules(t *testing.T) {
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, ".env"), []byte("API_KEY=CANARY"), 0o644)
	os.WriteFile(filepath.Join(repo, "SKILL.md"), []byte("---\nname: rootlink\ndescription: d\n---\nbody"), 0o644)
	root := filepath.Join(repo, ".lovia", "skills")
	os.MkdirAll(root, 0o755)
	if err := os.Symlink("../..", filepath.Join(root, "rootlink")); err != nil {
		t.Fatal(err)
	}
	denyDir := writeSkill(t, root, "denied", "d", "CANARY-BODY")
	denied := func(abs string) string {
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		if strings.HasPrefix(filepath.Base(real), ".env") || strings.HasSuffix(real, ".pem") || strings.HasPrefix(real, denyDir) {
			return "denied_paths"
		}
		return ""
	}
	list, problems := List(context.Background(), Config{Dirs: []string{root}, Repo: repo, Denied: denied})
	var s *Skill
	for i := range list {
		if list[i].Name == "denied" {
			t.Errorf("a SKILL.md the policy denies loaded: %+v", list[i])
		}
		if list[i].Name == "rootlink" {
			s = &list[i]
		}
	}
	if s == nil || len(problems) != 1 || !strings.Contains(problems[0].Error(), "denies reading") {
		t.Fatalf("skills %v problems %v", list, problems)
	}
	if data, err := s.ReadFile(".env"); !errors.Is(err, ErrDenied) || strings.Contains(string(data), "CANARY") {
		t.Fatalf("read_skill_file .env = %q, %v", data, err)
	}
	if _, err := s.ReadFile("SKILL.md"); err != nil {
		t.Fatalf("an allowed file: %v", err)
	}
	os.WriteFile(filepath.Join(repo, "k.env.pem"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(repo, "notes.md"), []byte("x"), 0o644)
	files, _ := s.Files(0)
	if !slices.Contains(files, "notes.md") || slices.Contains(files, "k.env.pem") {
		t.Fatalf("files %v", files)
	}
}
