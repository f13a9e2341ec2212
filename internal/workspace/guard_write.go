package workspace

import (
	"fmt"
	"strings"
	"sync"
)

// Programs that copy, move or link: their options are parsed like the programs do,
// so "-t/x", "-tDIR", "--targ=/x" name the target directory however they are
// written. Effects beyond optSpec's letters:
//
//	T  the value is the target directory
//	h  the operands are hard-linked, not copied
//	D  every operand is a directory to create (install -d)
//	S  symbolic links (the sources are only names)
var copySpecs = sync.OnceValue(func() map[string]*optSpec {
	return map[string]*optSpec{
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
})

// copyUse records the claims of cp, mv, install, ln, link, rsync and scp: the
// sources are read (moved sources are written too), the target is written.
func (g *guard) copyUse(name string, ws []word, st *gstate) {
	sp := copySpecs()[name]
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

// inPlace are programs that write the files they are given (compressors replace
// them, dos2unix converts them) or an output named by an operand (split, csplit):
// parsed here so the guard sees those writes without the sandbox.
var inPlace = sync.OnceValue(func() map[string]*optSpec {
	return map[string]*optSpec{
		"gzip": compressSpec(), "gunzip": compressSpec(), "pigz": compressSpec(), "bzip2": compressSpec(),
		"bunzip2": compressSpec(), "xz": compressSpec(), "unxz": compressSpec(), "lzma": compressSpec(),
		"unlzma": compressSpec(), "zstd": compressSpec(), "unzstd": compressSpec(), "lz4": compressSpec(),
		"dos2unix": opts("+exact -n:n -o -q -k -f -s -c= -u -v -h -V --newfile:n --oldfile --quiet --keepdate --force --safe --help --version"),
		"unix2dos": opts("+exact -n:n -o -q -k -f -s -c= -u -v -h -V --newfile:n --oldfile --quiet --keepdate --force --safe --help --version"),
		"split": opts(`-a= -b= -C= -d -x --numeric-suffixes? --hex-suffixes? -e -l= -n= -t= -u --verbose
		--suffix-length= --additional-suffix= --bytes= --line-bytes= --elide-empty-files
		--lines= --number= --separator= --unbuffered --filter=x --help --version`),
		"csplit": opts(`-b= -f= -k -n= -s -q -z --suffix-format= --prefix= --keep-files --suppress-matched
		--digits= --quiet --silent --elide-empty-files --help --version`),
		"sponge": opts("-a"),
		"patch": opts(`-b -B= -c -d=d -D= -e -E -f -F= -g= -i=r -l -n -N -o=w -p= -r=w -R -s -t -T -u -v -V=
		-x= -Y= -z= -Z --backup --prefix= --context --directory=d --ifdef= --ed --remove-empty-files
		--force --fuzz= --get= --input=r --ignore-whitespace --normal --forward --output=w
		--strip= --reject-file=w --reverse --silent --quiet --batch --set-time --unified
		--version-control= --basename-prefix= --debug= --suffix= --set-utc --dry-run --verbose
		--posix --binary --follow-symlinks --merge? --quoting-style= --read-only= --reject-format=
		--no-backup-if-mismatch --backup-if-mismatch --help --version`),
	}
})

var compressSpec = sync.OnceValue(func() *optSpec {
	return opts(`-c:c -k -d -f -l:c -t:c -q -v -r:R -n -N -S= -1 -2 -3 -4 -5 -6 -7 -8 -9 -T= -z -e
	-0 --stdout:c --to-stdout:c --keep --decompress --uncompress --force --list:c --test:c --quiet
	--verbose --recursive:R --no-name --name --suffix= --fast --best --threads= --rsyncable
	--synchronous --help --version`)
})

func (g *guard) inPlaceUse(name string, ws []word, st *gstate) {
	p := inPlace()[name].parse(ws)
	if p.unknown != "" {
		g.a.reason(Ask, fmt.Sprintf("%s is not an option of %s the guard knows", p.unknown, name))
	}
	st = st.copy()
	for _, o := range p.opts {
		switch {
		case o.def.has('x'):
			g.a.reason(Ask, fmt.Sprintf("%s %s runs another program", name, o.as))
		case !o.hasVal:
		case o.def.has('w'):
			g.claim(o.val, OpWrite, st, name+" "+o.as)
		case o.def.has('r'):
			g.claim(o.val, OpRead, st, name+" "+o.as)
		case o.def.has('d'):
			g.cd(o.val, st)
		}
	}
	ops := p.operands
	switch name {
	case "split":
		// split [INPUT [PREFIX]]: the pieces are written next to the prefix.
		if len(ops) > 0 {
			g.claim(ops[0], OpRead, st, name)
		}
		prefix := word{lit: "x"}
		if len(ops) > 1 {
			prefix = ops[1]
		}
		g.claim(prefix, OpWrite, st, name+" output")
	case "csplit":
		if len(ops) > 0 {
			g.claim(ops[0], OpRead, st, name)
		}
		prefix := word{lit: "xx"}
		for _, o := range p.opts {
			if (o.def.name == "-f" || o.def.name == "--prefix") && o.hasVal {
				prefix = o.val
			}
		}
		g.claim(prefix, OpWrite, st, name+" output")
	case "sponge":
		for _, w := range ops {
			g.claim(w, OpWrite, st, name)
		}
	case "patch":
		if p.has('w') {
			// -o FILE: the original is only read.
			if len(ops) > 0 {
				g.claim(ops[0], OpRead, st, name)
			}
		} else if len(ops) > 0 {
			g.claim(ops[0], OpWrite, st, name)
		} else {
			g.claim(word{dyn: true, src: "the files the patch names"}, OpWrite, st, name)
		}
		if len(ops) > 1 {
			g.claim(ops[1], OpRead, st, name+" patch")
		}
	case "dos2unix", "unix2dos":
		if p.has('n') {
			for i, w := range ops {
				op := OpRead
				if i%2 == 1 {
					op = OpWrite
				}
				g.claim(w, op, st, name)
			}
			return
		}
		for _, w := range ops {
			g.claim(w, OpWrite, st, name)
		}
	default: // compressors
		op := OpWrite
		if p.has('c') {
			op = OpRead // to stdout, listing or testing: the files stay
		}
		for _, w := range ops {
			if p.has('R') {
				g.claimTree(w, op, st, name, false)
			} else {
				g.claim(w, op, st, name)
			}
		}
	}
}

// awkSpec: awk, gawk, mawk. -i inplace (gawk) rewrites the input files.
var awkSpec = sync.OnceValue(func() *optSpec {
	return opts(`-f=rs --file=rs -v= --assign= -F= --field-separator= -i=I --include=I -E=rs
	--exec=rs -l=x --load=x -e=s --source=s -b -c -C -d? -D? -g -h -L? -M -n -N -o? -O -p? -P -r -s
	-S -t -V --characters-as-bytes --traditional --copyright --dump-variables? --debug?
	--gen-pot --help --lint? --bignum --non-decimal-data --use-lc-numeric --optimize
	--pretty-print? --profile? --posix --re-interval --no-optimize --sandbox --lint-old
	--version --csv -W=`)
})

// awkUse: the program runs anything (the command asks by default); its files are
// read, or written with -i inplace.
func (g *guard) awkUse(name string, ws []word, st *gstate) {
	p := awkSpec().parse(ws)
	inplace := false
	for _, o := range p.opts {
		switch {
		case o.def.has('I'):
			if o.val.dyn || strings.TrimSuffix(o.val.lit, ".awk") == "inplace" {
				inplace = true
			} else {
				g.claim(o.val, OpRead, st, name+" "+o.as)
			}
		case o.def.has('r') && o.hasVal:
			g.claim(o.val, OpRead, st, name+" "+o.as)
		case o.def.has('x'):
			g.a.reason(Ask, fmt.Sprintf("%s %s loads a shared library", name, o.as))
		}
	}
	ops := p.operands
	if !p.has('s') && len(ops) > 0 {
		ops = ops[1:] // the program
	}
	for _, w := range ops {
		if !w.dyn && strings.Contains(w.lit, "=") && !strings.Contains(strings.SplitN(w.lit, "=", 2)[0], "/") {
			continue // var=value
		}
		if inplace {
			g.claim(w, OpWrite, st, name+" -i inplace")
		} else {
			g.claim(w, OpRead, st, name)
		}
	}
}
