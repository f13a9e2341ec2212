package workspace

import (
	"fmt"
	"strings"
)

// Programs that copy, move or link: their options are parsed like the programs do,
// so "-t/x", "-tDIR", "--targ=/x" name the target directory however they are
// written. Effects beyond optSpec's letters:
//
//	T  the value is the target directory
//	h  the operands are hard-linked, not copied
//	D  every operand is a directory to create (install -d)
//	S  symbolic links (the sources are only names)
var copySpecs = map[string]*optSpec{
	"cp": opts(`-a:c -b --backup? -d -f -i -H -l:h -L:L -n -P -p --preserve? --no-preserve= --parents
		-R:c -r:c --recursive:c --reflink? --remove-destination --sparse= --strip-trailing-slashes
		-s:S --symbolic-link:S -S= --suffix= -t=T --target-directory=T -T --no-target-directory -u
		--update? -v -x -Z --context? --archive:c --attributes-only --copy-contents --dereference:L
		--force --interactive --link:h --no-clobber --no-dereference --one-file-system --verbose
		--debug --keep-directory-symlink --help --version`),
	"mv": opts(`-b --backup? -f -i -n -S= --suffix= -t=T --target-directory=T -T --no-target-directory
		-u --update? -v -Z --context --force --interactive --no-clobber --strip-trailing-slashes
		--verbose --exchange --no-copy --debug --help --version`),
	"install": opts(`-b --backup? -c -C --compare -d:D --directory:D -D -g= --group= -m= --mode= -o=
		--owner= -p --preserve-timestamps -s:x --strip:x --strip-program=x -S= --suffix= -t=T
		--target-directory=T -T --no-target-directory -v --verbose --preserve-context -Z --context?
		--debug --help --version`),
	"ln": opts(`-b --backup? -d -F --directory -f --force -i --interactive -L --logical -n
		--no-dereference -P --physical -r --relative -s:S --symbolic:S -S= --suffix= -t=T
		--target-directory=T -T --no-target-directory -v --verbose --help --version`),
	"link": opts("--help --version"),
	"rsync": opts(`+exact -v -q -c -a:c -r:c -R -b -u -l -L:L -k:L -K -H -p -E -A -X -o -g -D -t -U -N -O
		-J -S -n -W -x -y -z -C -F -h -P -i -m -0 -4 -6 -8 -M=x -T=w -B= -e=x -f= -I -@= --verbose
		--quiet --checksum --archive:c --recursive:c --relative --no-relative --backup --update
		--links --copy-links:L --copy-unsafe-links:L --safe-links --copy-dirlinks:L
		--keep-dirlinks:L --hard-links --perms --executability --acls --xattrs --owner --group
		--devices --specials --times --atimes --crtimes --omit-dir-times --omit-link-times
		--super --fake-super --sparse --preallocate --dry-run --whole-file --one-file-system
		--existing --ignore-existing --remove-source-files:W --delete --delete-before
		--delete-during --delete-delay --delete-after --delete-excluded --ignore-errors --force
		--max-delete= --max-size= --min-size= --partial --partial-dir=w --delay-updates
		--prune-empty-dirs --numeric-ids --timeout= --contimeout= --ignore-times --size-only
		--modify-window= --temp-dir=w --fuzzy --compare-dest=r --copy-dest=r --link-dest=r
		--compress --compress-level= --compress-choice= --skip-compress= --cvs-exclude --filter=
		--exclude= --exclude-from=r --include= --include-from=r --files-from=l --from0 --protect-args
		--secluded-args --address= --port= --sockopts= --blocking-io --stats --8-bit-output
		--human-readable --progress --itemize-changes --out-format= --log-file=w --log-file-format=
		--password-file=r --list-only --bwlimit= --write-batch=w --only-write-batch=w --read-batch=r
		--protocol= --iconv= --checksum-seed= --ipv4 --ipv6 --version --help --rsh=x
		--rsync-path=x --backup-dir=w --suffix= --chmod= --chown= --usermap= --groupmap= --info=
		--debug= --mkpath --append --append-verify --inplace --no-inc-recursive --open-noatime
		--ignore-missing-args --delete-missing-args --outbuf= --remote-option=x --early-input=r
		--checksum-choice= --stop-after= --stop-at= --no-implied-dirs --del --no-motd`),
	"scp": opts(`+exact -3 -4 -6 -A -B -C -O -p -q -R -r:c -T -v -c= -D= -F= -i= -J= -l= -o=x -P= -S=x -X=`),
}

// copyUse records the claims of cp, mv, install, ln, link, rsync and scp: the
// sources are read (moved sources are written too), the target is written.
func (g *guard) copyUse(name string, ws []word, st *gstate) {
	sp := copySpecs[name]
	p := sp.parse(ws)
	var target *word
	rec, follow, sym, dirs := p.has('c'), p.has('L'), p.has('S'), p.has('D')
	hard := p.has('h') || name == "link" || name == "ln" && !sym
	for _, o := range p.opts {
		if !o.hasVal {
			if o.def.has('x') {
				g.a.reason(Ask, fmt.Sprintf("%s %s runs another program", name, o.as))
			}
			continue
		}
		switch {
		case o.def.has('T'):
			t := o.val
			target = &t
		case o.def.has('w'):
			g.claim(o.val, OpWrite, st, name+" "+o.as)
		case o.def.has('r'):
			g.claim(o.val, OpRead, st, name+" "+o.as)
		case o.def.has('l'):
			g.claim(o.val, OpRead, st, name+" "+o.as)
			g.claim(word{dyn: true, src: "the files listed in " + o.val.show()}, OpRead, st, name)
		case o.def.has('x'):
			g.a.reason(Ask, fmt.Sprintf("%s %s runs another program", name, o.as))
		}
	}
	rest := p.operands
	if dirs {
		for _, w := range rest {
			g.claim(w, OpWrite, st, name+" -d")
		}
		return
	}
	if p.unknown != "" {
		// Where the target is depends on what the unknown option takes: judge every
		// operand as written.
		g.a.reason(Ask, fmt.Sprintf("%s is not an option of %s the guard knows", p.unknown, name))
		for _, w := range rest {
			if !remote(name, w) {
				g.claim(w, OpWrite, st, name)
			}
		}
	}
	if target == nil && len(rest) > 0 {
		t := rest[len(rest)-1]
		target = &t
		rest = rest[:len(rest)-1]
		if (name == "ln" || name == "cp" && (sym || hard)) && len(rest) == 0 {
			// ln TARGET: the link is created in the current directory.
			rest = []word{t}
			target = &word{lit: "."}
		}
	}
	for _, w := range rest {
		if remote(name, w) {
			continue
		}
		switch {
		case hard && !sym:
			// A hard link shares the file: writing the link writes the original.
			g.claim(w, OpRead, st, name)
			g.claim(w, OpWrite, st, name+" (a hard link shares the file)")
		case name == "mv" || p.has('W'):
			g.claim(w, OpWrite, st, name) // moved away: the source is removed
		case rec:
			g.claimTree(w, OpRead, st, name, follow)
		default:
			g.claim(w, OpRead, st, name)
		}
	}
	if target != nil && !remote(name, *target) {
		g.claim(*target, OpWrite, st, name)
	}
}

// remote reports an scp/rsync operand on another host (host:path).
func remote(name string, w word) bool {
	if name != "scp" && name != "rsync" || w.dyn {
		return false
	}
	host, _, ok := strings.Cut(w.lit, ":")
	return ok && !strings.Contains(host, "/")
}
