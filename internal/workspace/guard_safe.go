package workspace

import (
	"fmt"
	"strings"
	"sync"
)

// The no-approval set: programs that only read, with every option they accept listed.
// A command from this set runs without approval only when each of its options is
// known and read-only; its path arguments (operands and option values) are still
// judged as reads. Anything else — an unknown option, an option or operand that
// writes, a script that runs code — leaves the command to the command rules (ask by
// default under coding), with its paths judged for what they are.

// operandRule is how a safe command uses its operands.
type operandRule uint8

const (
	opsRead    operandRule = iota // every operand is a file it reads
	opsNone                       // operands are not files (echo, seq, id)
	opsMaybe                      // path-looking operands are looked at (test, df)
	opsPattern                    // the first operand is a pattern or script unless an option gave one
	opsInOut                      // INPUT [OUTPUT]: a second operand is written (uniq, xxd)
)

type safeCmd struct {
	spec *optSpec
	ops  operandRule
	// check looks at what the options cannot show (a sed script, a date operand); it
	// returns a use worse than useSafe with the reason.
	check func(g *guard, p *parsed, st *gstate) (use, string)
}

// use is how far a command goes beyond reading.
type use uint8

const (
	useSafe   use = iota
	useWrites     // it writes paths that were judged as writes
	useCode       // it runs code, or does something the guard cannot follow
)

var hashSpec = "-b -c:l -t -z -w --binary --check:l --tag --text --zero --ignore-missing --quiet --status --strict --warn --help --version"

var grepSpec = `+num -E -F -G -P -e=s -f=rs -i -y -v -w -x -c -L -l -m= -o -q -s -b -H -h -n -T -Z -z
	-A= -B= -C= -a -D= -d= -I -r:c -R:cL -U -V
	--extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp=s --file=rs
	--ignore-case --no-ignore-case --word-regexp --line-regexp --null-data --no-messages
	--invert-match --version --help --max-count= --byte-offset --line-number --no-line-number
	--line-buffered --with-filename --no-filename --label= --only-matching --quiet --silent
	--binary-files= --text --directories= --devices= --recursive:c --dereference-recursive:cL
	--include= --exclude= --exclude-from=r --exclude-dir= --files-without-match
	--files-with-matches --count --initial-tab --null --before-context= --after-context=
	--context= --group-separator= --no-group-separator --color? --colour? --binary`

// safeCmds is the no-approval set.
var safeCmds = sync.OnceValue(func() map[string]*safeCmd {
	return map[string]*safeCmd{
		"ls": {spec: opts(`-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -I= -k -l -L -m -n -N -o -p -q -Q
		-r -R -s -S -t -T= -u -U -v -w= -x -X -Z -1 --all --almost-all --author --escape
		--block-size= --ignore-backups --color? --directory --dired --classify? --file-type
		--format= --full-time --group-directories-first --no-group --human-readable --si
		--dereference-command-line --dereference-command-line-symlink-to-dir --hide= --hyperlink?
		--indicator-style= --inode --ignore= --kibibytes --dereference --numeric-uid-gid --literal
		--hide-control-chars --show-control-chars --quote-name --quoting-style= --reverse
		--recursive --size --sort= --time? --time-style= --tabsize= --width= --context --zero
		--help --version`), ops: opsRead},
		"cat": {spec: opts(`-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number
		--squeeze-blank --show-tabs --show-nonprinting --help --version`), ops: opsRead},
		"head": {spec: opts(`+num -c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose
		--zero-terminated --help --version`), ops: opsRead},
		"tail": {spec: opts(`+num -c= -f -F -n= -q -s= -v -z --bytes= --follow? --lines= --max-unchanged-stats=
		--pid= --quiet --retry --silent --sleep-interval= --verbose --zero-terminated --help --version`), ops: opsRead},
		"wc": {spec: opts(`-c -m -l -L -w --bytes --chars --lines --files0-from=l --max-line-length --words
		--total= --help --version`), ops: opsRead},
		"grep":  {spec: opts(grepSpec), ops: opsPattern},
		"egrep": {spec: opts(grepSpec), ops: opsPattern},
		"fgrep": {spec: opts(grepSpec), ops: opsPattern},
		"rg": {spec: opts(`+exact +num -i -s -S -F -w -x -v -n -N -l -c -o -H -I -A= -B= -C= -m= -e=s -f=rs
		-g= -t= -T= -u -. -d= -L:L -U -P -p -q -0 -a -M= -j= -b -r= -E= -h -V -z:x
		--ignore-case --case-sensitive --smart-case --fixed-strings --word-regexp --line-regexp
		--invert-match --line-number --no-line-number --files-with-matches --files-without-match
		--count --count-matches --only-matching --with-filename --no-filename --no-heading --heading
		--after-context= --before-context= --context= --max-count= --regexp=s --file=rs --glob=
		--iglob= --glob-case-insensitive --type= --type-not= --type-list --type-add= --type-clear=
		--hidden --no-hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global
		--no-ignore-parent --no-ignore-exclude --no-ignore-files --no-ignore-messages
		--ignore-file=r --max-depth= --maxdepth= --max-filesize= --files:s --follow:L --no-follow
		--multiline --multiline-dotall --pcre2 --no-pcre2-unicode --auto-hybrid-regex --engine=
		--json --vimgrep --color= --colors= --pretty --quiet --stats --null --null-data --text
		--binary --no-binary --max-columns= --max-columns-preview --trim --sort= --sortr=
		--sort-files --threads= --column --no-column --byte-offset --replace= --passthru --passthrough
		--context-separator= --no-context-separator --field-match-separator=
		--field-context-separator= --path-separator= --no-messages --no-config --debug --trace
		--help --version --one-file-system --no-require-git --crlf --line-buffered
		--block-buffered --mmap --no-mmap --encoding= --no-encoding --no-unicode --include-zero
		--dfa-size-limit= --regex-size-limit= --unrestricted --hyperlink-format= --ignore
		--pre=x --pre-glob=x --search-zip:x --hostname-bin=x`), ops: opsPattern},
		"pwd":    {spec: opts("-L -P --help --version"), ops: opsNone},
		"echo":   {ops: opsNone},
		"printf": {ops: opsNone},
		"true":   {ops: opsNone},
		"false":  {ops: opsNone},
		":":      {ops: opsNone},
		"test":   {ops: opsMaybe},
		"[":      {ops: opsMaybe},
		"stat": {spec: opts(`-L -f -c= -t --dereference --file-system --cached= --format= --printf= --terse
		--help --version`), ops: opsRead},
		"file": {spec: opts(`-0 -b -c -d -e= -E -f=l -F= -h -i -k -l -L -m=r -n -N -p:x -P= -r -s -S -v -z:x
		-Z:x -C:x --apple --brief --checking-printout --compile:x --debug --dereference --exclude=
		--exclude-quiet= --extension --files-from=l --help --keep-going --list --magic-file=r
		--mime --mime-encoding --mime-type --no-buffer --no-dereference --no-pad --no-sandbox
		--parameter= --preserve-date:x --print0 --raw --separator= --special-files --uncompress:x
		--uncompress-noreport:x --version`), ops: opsRead},
		"diff": {spec: opts(`-a -b -B -c -C= -d -D= -e -E -F= -i -I= -l:x -n -N -p -q -r:c -s -S= -t -T -u
		-U= -v -w -W= -x= -X=r -y -Z --brief --color? --context? --ed --exclude-from=r --exclude=
		--expand-tabs --from-file=r --help --horizon-lines= --ifdef= --ignore-all-space
		--ignore-blank-lines --ignore-case --ignore-file-name-case --ignore-matching-lines=
		--ignore-space-change --ignore-tab-expansion --ignore-trailing-space --initial-tab --label=
		--left-column --line-format= --old-line-format= --new-line-format=
		--unchanged-line-format= --old-group-format= --new-group-format=
		--changed-group-format= --unchanged-group-format= --minimal --new-file
		--no-dereference --no-ignore-file-name-case --normal --paginate:x --palette= --rcs
		--recursive:c --report-identical-files --show-c-function --show-function-line=
		--side-by-side --speed-large-files --starting-file= --strip-trailing-cr
		--suppress-blank-empty --suppress-common-lines --tabsize= --text --to-file=r
		--unidirectional-new-file --unified? --version --width=`), ops: opsRead},
		"cmp": {spec: opts(`-b -i= -l -n= -s -v --print-bytes --ignore-initial= --verbose --bytes= --quiet
		--silent --help --version`), check: cmpCheck},
		"tree": {spec: opts(`+exact -a -d -l -f -x -L= -R:x -P= -I= -o=w -i -A -S -n -C -Q -N -p -u -g -s -h
		-D -F -v -t -c -U -r -q -J -X -H= -T= --gitignore --gitfile=r --ignore-case --matchdirs
		--metafirst --prune --info --infofile=r --noreport --charset= --filelimit= --si --du
		--timefmt= --inodes --device --dirsfirst --filesfirst --sort= --nolinks --hintro=r
		--houtro=r --fromfile --fromtabfile --fflinks --help --version`), ops: opsRead},
		"du": {spec: opts(`-0 -a -B= -b -c -D -d= -H -h -k -L -l -m -P -S -s -t= -X=r -x --null --all
		--apparent-size --block-size= --bytes --total --dereference-args --max-depth= --files0-from=l
		--human-readable --inodes --si --count-links --dereference --no-dereference
		--separate-dirs --summarize --threshold= --time? --time-style= --exclude-from=r
		--exclude= --one-file-system --help --version`), ops: opsRead},
		"df": {spec: opts(`-a -B= -h -H -i -k -l -P -t= -T -x= -v --all --block-size= --human-readable --si
		--inodes --local --output? --portability --print-type --sync --no-sync --total --type=
		--exclude-type= --help --version`), ops: opsMaybe},
		"which":    {spec: opts("-a -s"), ops: opsNone},
		"type":     {spec: opts("-a -f -P -p -t"), ops: opsNone},
		"basename": {spec: opts("-a -s= -z --multiple --suffix= --zero --help --version"), ops: opsNone},
		"dirname":  {spec: opts("-z --zero --help --version"), ops: opsNone},
		"realpath": {spec: opts(`-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing
		--logical --physical --quiet --relative-to=r --relative-base=r --strip --no-symlinks --zero
		--help --version`), ops: opsRead},
		"readlink": {spec: opts(`-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing
		--canonicalize-missing --no-newline --quiet --silent --verbose --zero --help --version`), ops: opsRead},
		"date": {spec: opts(`-d= -f=r -I? -r=r -R -s=x -u --date= --debug --file=r --iso-8601? --resolution
		--reference=r --rfc-email --rfc-3339= --set=x --universal --utc --help --version`), check: dateCheck},
		"whoami": {spec: opts("--help --version"), ops: opsNone},
		"uname": {spec: opts(`-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release
		--kernel-version --machine --processor --hardware-platform --operating-system --help
		--version`), ops: opsNone},
		"id": {spec: opts(`-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero
		--help --version`), ops: opsNone},
		"cut": {spec: opts(`-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields=
		--complement --only-delimited --output-delimiter= --zero-terminated --help --version`), ops: opsRead},
		"tr": {spec: opts(`-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 --help
		--version`), ops: opsNone},
		"uniq": {spec: opts(`+num -c -d -D -f= -i -s= -u -w= -z --all-repeated? --check-chars= --count
		--group? --ignore-case --repeated --skip-chars= --skip-fields= --unique --zero-terminated
		--help --version`), ops: opsInOut},
		"nl": {spec: opts(`-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= --section-delimiter=
		--footer-numbering= --header-numbering= --line-increment= --join-blank-lines=
		--number-format= --no-renumber --number-separator= --starting-line-number=
		--number-width= --help --version`), ops: opsRead},
		"tac": {spec: opts("-b -r -s= --before --regex --separator= --help --version"), ops: opsRead},
		"rev": {spec: opts("-0 -h -V --zero --help --version"), ops: opsRead},
		"od": {spec: opts(`-A= -j= -N= -S? -t= -v -w? -a -b -c -d -D -e -f -F -h -H -i -I -l -L -o -O -s -x -X
		--address-radix= --endian= --skip-bytes= --read-bytes= --strings? --format=
		--output-duplicates --width? --traditional --help --version`), ops: opsRead},
		"xxd": {spec: opts(`+onedash -a -autoskip -b -bits -C -capitalize -c= -cols= -d -E -EBCDIC -e -g=
		-groupsize= -h -help -i -include -l= -len= -n= -name= -o= -offset= -p -ps -postscript
		-plain -r -revert -R= -s= -seek= -u -v -version`), ops: opsInOut},
		"hexdump": {spec: opts(`-b -c -C -d -o -x -e= -f=r -L? -n= -s= -v -h -V --one-byte-octal
		--one-byte-char --canonical --two-bytes-decimal --two-bytes-octal --two-bytes-hex
		--format= --format-file=r --color? --length= --skip= --no-squeezing --help --version`), ops: opsRead},
		"strings": {spec: opts(`+num -a -d -f -n= -t= -o -e= -T= -U= -w -s= -h -v -V --all --data
		--print-file-name --bytes= --radix= --encoding= --target= --unicode=
		--include-all-whitespace --output-separator= --help --version`), ops: opsRead, check: atFileCheck},
		"md5sum":    {spec: opts(hashSpec), ops: opsRead},
		"sha1sum":   {spec: opts(hashSpec), ops: opsRead},
		"sha224sum": {spec: opts(hashSpec), ops: opsRead},
		"sha256sum": {spec: opts(hashSpec), ops: opsRead},
		"sha384sum": {spec: opts(hashSpec), ops: opsRead},
		"sha512sum": {spec: opts(hashSpec), ops: opsRead},
		"b2sum":     {spec: opts(hashSpec + " -l= --length="), ops: opsRead},
		"jq": {spec: opts(`+exact -n -r -j -a -s -C -M -S -c -e -h -V -R -f:xs -L=R --tab --indent= --arg%
		--argjson% --slurpfile%r --rawfile%r --args:a --jsonargs:a --from-file:xs --library-path=R
		--null-input --raw-input --raw-output --join-output --ascii-output --slurp
		--compact-output --color-output --monochrome-output --sort-keys --exit-status --seq
		--stream --stream-errors --unbuffered --raw-output0 --help --version
		--build-configuration`), ops: opsPattern, check: jqCheck},
		"seq":      {spec: opts("+num -f= -s= -w --format= --separator= --equal-width --help --version"), ops: opsNone},
		"sleep":    {spec: opts("--help --version"), ops: opsNone},
		"printenv": {spec: opts("-0 --null --help --version"), ops: opsNone},
		"sort": {spec: opts(`-b -d -f -g -h -i -M -n -R -r -V -c -C -k= -m -o=w -s -S= -t= -T=w -u -z
		--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort
		--ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort
		--random-source=r --reverse --sort= --version-sort --batch-size= --check? --compress-program=x
		--debug --files0-from=l --key= --merge --output=w --stable --buffer-size=
		--field-separator= --temporary-directory=w --parallel= --unique --zero-terminated --help
		--version`), ops: opsRead},
		"column": {spec: opts(`-c= -d -e -E= -H= -i= -J -l= -L -n= -N= -o= -O= -p= -r= -R= -s= -t -T= -W= -x
		-h -V --output-width= --table-noheadings --table-header-repeat --table-noextreme=
		--table-hide= --tree-id= --json --table-columns-limit= --keep-empty-lines --table-name=
		--table-columns= --output-separator= --table-order= --tree-parent= --tree=
		--table-right= --separator= --table= --table-truncate= --table-wrap= --fillrows --help
		--version`), ops: opsRead},
		"sed": {spec: opts(`-n -e=s -f=rs -E -r -s -z -u -b -l= -i?W --quiet --silent --debug --expression=s
		--file=rs --follow-symlinks --in-place?W --line-length= --posix --regexp-extended
		--separate --sandbox --unbuffered --null-data --binary --zero-terminated --help --version`),
			ops: opsPattern, check: sedCheck},
	}
})

// builtins run no programs and use no files (redirects are judged on their own).
var safeBuiltins = set("cd", "pushd", "popd", "exit", "return", "shift", "set", "unset", "export",
	"local", "wait", "command")

// safeUse judges one command from the no-approval set, recording its path claims.
func (g *guard) safeUse(name string, sc *safeCmd, ws []word, st *gstate) (use, string) {
	u, why := useSafe, ""
	worse := func(nu use, w string) {
		if nu > u {
			u, why = nu, w
		}
	}
	if sc.spec == nil {
		// echo, printf, true, test: no options that act.
		for _, w := range ws[1:] {
			if sc.ops == opsMaybe {
				g.maybePath(w, st, false)
			}
		}
		return u, why
	}
	p := sc.spec.parse(ws)
	if p.unknown != "" {
		worse(useCode, fmt.Sprintf("%s is not an option of %s that the guard knows to be read-only", p.unknown, name))
	}
	rec, follow, writeOps, lists := p.has('c'), p.has('L'), p.has('W'), false
	for _, o := range p.opts {
		if (o.def.name == "-d" || o.def.name == "--directories") && o.hasVal && (o.val.dyn || strings.HasPrefix(o.val.lit, "rec")) {
			rec = true // grep -d recurse
		}
		if o.def.eff == "" {
			continue
		}
		what := name + " " + o.as
		for i := 0; i < len(o.def.eff); i++ {
			switch o.def.eff[i] {
			case 'r':
				if o.hasVal {
					g.claim(o.val, OpRead, st, what)
				}
			case 'R':
				if o.hasVal {
					g.claimTree(o.val, OpRead, st, what, false)
				}
			case 'w':
				if o.hasVal {
					g.claim(o.val, OpWrite, st, what)
				}
				worse(useWrites, fmt.Sprintf("%s writes %s", what, o.val.show()))
			case 'l':
				if o.hasVal {
					g.claim(o.val, OpRead, st, what)
					g.claim(word{dyn: true, src: "the files listed in " + o.val.show()}, OpRead, st, what)
				} else {
					lists = true // sha256sum -c: the operands list the files to read
				}
			case 'x':
				worse(useCode, fmt.Sprintf("%s runs other programs or does more than read", what))
			case 'W':
				worse(useWrites, fmt.Sprintf("%s %s writes its files", name, o.as))
			}
		}
	}
	if follow && rec || follow && name == "rg" {
		g.a.reason(Ask, fmt.Sprintf("%s follows symbolic links while it searches directories; a link can lead to credential stores", name))
	}
	if sc.ops != opsNone {
		for _, w := range p.late {
			if !w.dyn && strings.Contains(w.lit, "/") {
				g.claim(w, OpRead, st, name)
			}
		}
	}
	if name == "diff" && rec && !p.hasName("--no-dereference") {
		follow = true // diff -r follows symbolic links it meets
	}
	operands := p.operands
	if sc.ops == opsPattern && !p.has('s') && len(operands) > 0 {
		operands = operands[1:] // the pattern or script
	}
	if p.has('a') && len(operands) > 0 {
		operands = nil // jq --args: the rest are arguments
	}
	op := OpRead
	if writeOps {
		op = OpWrite
	}
	if lists {
		for _, w := range operands {
			g.claim(word{dyn: true, src: "the files listed in " + w.show()}, OpRead, st, name)
		}
		if len(operands) == 0 {
			g.claim(word{dyn: true, src: "the files listed on standard input"}, OpRead, st, name)
		}
	}
	if name == "rg" {
		g.treeNames = p.hasName("--files") || p.hasName("--type-list")
		g.treeNoHidden = !p.hasName("--hidden") && !p.hasName("-.") && !p.hasName("-u") && !p.hasName("--unrestricted")
		g.treeGitignore = g.treeNoHidden && !p.hasName("--no-ignore") && !p.hasName("--no-ignore-vcs")
		defer func() { g.treeNames, g.treeNoHidden, g.treeGitignore = false, false, false }()
	}
	switch sc.ops {
	case opsRead, opsPattern:
		for _, w := range operands {
			if name == "rg" || rec {
				g.claimTree(w, op, st, name, follow)
			} else {
				g.claim(w, op, st, name)
			}
		}
		if (name == "rg" || rec) && len(operands) == 0 {
			// With no directory named, they search the working directory.
			g.claimTree(word{lit: "."}, OpRead, st, name, follow)
		}
	case opsMaybe:
		for _, w := range operands {
			g.maybePath(w, st, false)
		}
	case opsInOut:
		for i, w := range operands {
			switch i {
			case 0:
				g.claim(w, OpRead, st, name)
			case 1:
				g.claim(w, OpWrite, st, name+" output")
				worse(useWrites, fmt.Sprintf("%s writes its second operand %s", name, w.show()))
			default:
				worse(useCode, fmt.Sprintf("%s takes at most two files", name))
			}
		}
	}
	if sc.check != nil {
		if cu, cw := sc.check(g, p, st); cu > useSafe {
			worse(cu, cw)
		}
	}
	return u, why
}

// cmpCheck: FILE1 [FILE2 [SKIP1 [SKIP2]]].
func cmpCheck(g *guard, p *parsed, st *gstate) (use, string) {
	for i, w := range p.operands {
		switch {
		case i < 2:
			g.claim(w, OpRead, st, "cmp")
		case i < 4 && !w.dyn && isSkip(w.lit):
		default:
			return useCode, "cmp takes two files and two offsets"
		}
	}
	return useSafe, ""
}

func isSkip(s string) bool {
	s = strings.TrimRight(s, "kKMGTPEZYRQBbi")
	return isDigits(strings.TrimPrefix(strings.ToLower(s), "0x")) || s == ""
}

// dateCheck: the only operand date accepts without setting the clock is +FORMAT.
func dateCheck(g *guard, p *parsed, st *gstate) (use, string) {
	for _, w := range p.operands {
		if w.dyn || !strings.HasPrefix(w.lit, "+") {
			return useCode, "date with an operand other than +FORMAT sets the system clock"
		}
	}
	return useSafe, ""
}

// atFileCheck: binutils read options from @FILE anywhere on the command line.
func atFileCheck(g *guard, p *parsed, st *gstate) (use, string) {
	for _, w := range p.operands {
		if !w.dyn && strings.HasPrefix(w.lit, "@") {
			g.claim(word{lit: w.lit[1:]}, OpRead, st, "@file")
			return useCode, "an @file argument reads further options from a file"
		}
	}
	return useSafe, ""
}

// jqCheck: a jq program can import modules and data files from the search path.
func jqCheck(g *guard, p *parsed, st *gstate) (use, string) {
	if p.has('x') {
		return useSafe, "" // already judged: the program comes from a file
	}
	if len(p.operands) == 0 {
		return useSafe, ""
	}
	prog := p.operands[0]
	if prog.dyn {
		return useCode, "the jq program is only known at run time"
	}
	for _, kw := range []string{"import", "include", "modulemeta", "get_search_list"} {
		if strings.Contains(prog.lit, kw) {
			return useCode, "the jq program loads modules or data files (" + kw + ")"
		}
	}
	return useSafe, ""
}
