package workspace

import (
	"fmt"
	"strings"
	"sync"
)

// tarSpec is GNU tar's option list (1.34). Mode letters are effects too:
// M0 create (c), M1 extract (x), M2 list or compare (t, d), M3 append/update (r, u).
var tarSpec = sync.OnceValue(func() *optSpec {
	return opts(`-A:3 --catenate:3 --concatenate:3 -c:0 --create:0 -d:2 --diff:2 --compare:2
	--delete:3 -r:3 --append:3 -t:2 --list:2 --test-label:2 -u:3 --update:3 -x:1 --extract:1
	--get:1 -f=F --file=F -C=d --directory=d -T=l --files-from=l -X=r --exclude-from=r
	-g=w --listed-incremental=w -G --incremental -I=x --use-compress-program=x --to-command=x
	-F=x --info-script=x --new-volume-script=x --rsh-command=x --checkpoint-action=x
	-K= --starting-file= -N= --newer= --after-date= --newer-mtime= --exclude= -b=
	--blocking-factor= -H= --format= -V= --label= -L= --tape-length= --owner= --group= --mode=
	--mtime= --index-file=w --backup? --suffix= --transform= --xform= --strip-components=
	--exclude-vcs --exclude-vcs-ignores --exclude-backups --exclude-caches --exclude-caches-all
	--exclude-caches-under --exclude-tag= --exclude-tag-all= --exclude-tag-under= --exclude-ignore=
	--exclude-ignore-recursive= -z -j -J -Z -a --gzip --gunzip --ungzip --bzip2 --xz --lzip --lzma
	--lzop --zstd --compress --uncompress --auto-compress --no-auto-compress -v --verbose
	-h:L --dereference:L -p --preserve-permissions --same-permissions -P:P --absolute-names:P -k
	--keep-old-files --keep-newer-files --skip-old-files --keep-directory-symlink -m --touch -o
	--no-same-owner -O:O --to-stdout:O -S --sparse --sparse-version= -W --verify -w --interactive
	--confirmation -B --read-full-records -i --ignore-zeros -M --multi-volume -R --block-number
	-s --preserve-order --same-order --remove-files:W --overwrite --overwrite-dir
	--no-overwrite-dir -U --unlink-first --recursive-unlink --recursion --no-recursion:N --null
	--no-null --wildcards --no-wildcards --wildcards-match-slash --no-wildcards-match-slash
	--anchored --no-anchored --ignore-case --no-ignore-case --totals? --checkpoint? -l
	--check-links --warning= --sort= --numeric-owner --same-owner --atime-preserve?
	--one-file-system --xattrs --no-xattrs --xattrs-include= --xattrs-exclude= --selinux
	--no-selinux --acls --no-acls --verbatim-files-from --no-verbatim-files-from --occurrence?
	--force-local --ignore-failed-read --ignore-command-error --no-ignore-command-error
	--hole-detection= --level= --pax-option= --quoting-style= --quote-chars= --no-quote-chars=
	--show-transformed-names --show-stored-names --utc --full-time --show-defaults
	--show-omitted-dirs --delay-directory-restore --no-delay-directory-restore --one-top-level?
	--restrict --record-size= --volno-file=w --unquote --no-unquote --seek --no-seek
	--numeric-owner --owner-map=r --group-map=r --clamp-mtime --no-check-device --check-device
	--help --usage --version --preserve --null`)
})

// tarUse walks tar's words in order: -C applies to the names after it.
func (g *guard) tarUse(ws []word, st *gstate) {
	if len(ws) > 1 && !ws[1].dyn && ws[1].lit != "" && !strings.HasPrefix(ws[1].lit, "-") {
		// Old style: "czf a.tgz" is "-c -z -f a.tgz".
		ws = append([]word{ws[0], {lit: "-" + ws[1].lit, src: ws[1].src}}, ws[2:]...)
	}
	mode := byte(' ')
	follow, abs, stdout, remove, norec := false, false, false, false, false
	var archives []word
	type item struct {
		w   word
		dir *gstate
	}
	var files []item
	p := tarSpec().parse(ws)
	if p.unknown != "" {
		g.a.reason(Ask, fmt.Sprintf("%s is not a tar option the guard knows", p.unknown))
	}
	// Replay options and names in order: -C applies to the names after it.
	cur := st
	oi, ni := 0, 0
	for oi < len(p.opts) || ni < len(p.operands) {
		if ni < len(p.operands) && (oi >= len(p.opts) || p.opAt[ni] < p.opts[oi].at) {
			files = append(files, item{p.operands[ni], cur})
			ni++
			continue
		}
		o := p.opts[oi]
		oi++
		for k := 0; k < len(o.def.eff); k++ {
			switch e := o.def.eff[k]; e {
			case '0', '1', '2', '3':
				mode = "cxtu"[e-'0']
			case 'F':
				archives = append(archives, o.val)
			case 'd':
				cur = cur.copy()
				g.cd(o.val, cur)
			case 'l':
				g.claim(o.val, OpRead, cur, "tar "+o.as)
				g.claim(word{dyn: true, src: "the files listed in " + o.val.show()}, OpRead, cur, "tar")
			case 'r':
				g.claim(o.val, OpRead, cur, "tar "+o.as)
			case 'w':
				g.claim(o.val, OpWrite, cur, "tar "+o.as)
			case 'x':
				g.a.reason(Ask, fmt.Sprintf("tar %s runs another program", o.as))
			case 'L':
				follow = true
			case 'P':
				abs = true
			case 'O':
				stdout = true
			case 'W':
				remove = true
			case 'N':
				norec = true
			}
		}
	}
	for _, a := range archives {
		if !a.dyn && strings.Contains(strings.SplitN(a.lit, "/", 2)[0], ":") {
			g.a.reason(Ask, "tar -f host:file runs a remote shell")
		}
	}
	switch mode {
	case 'x':
		if !stdout {
			g.claim(word{lit: "."}, OpWrite, cur, "tar extract")
			if abs {
				g.claim(word{lit: "/"}, OpWrite, cur, "tar -P extracts absolute names")
			}
		}
		for _, a := range archives {
			g.claim(a, OpRead, st, "tar archive")
		}
	case 'c', 'u':
		for _, a := range archives {
			g.claim(a, OpWrite, st, "tar archive")
		}
		for _, f := range files {
			op := OpRead
			if remove {
				op = OpWrite
			}
			if norec {
				g.claim(f.w, op, f.dir, "tar")
			} else {
				g.claimTree(f.w, op, f.dir, "tar", follow)
			}
		}
	default:
		for _, a := range archives {
			g.claim(a, OpRead, st, "tar archive")
		}
		if mode == 't' && len(ws) > 1 && strings.Contains(ws[1].lit, "d") {
			g.claim(word{dyn: true, src: "the files the archive names"}, OpRead, cur, "tar --diff")
		}
	}
}

func wordAt(ws []word, i int) word {
	if i < len(ws) {
		return ws[i]
	}
	return word{dyn: true, src: "(missing)"}
}

// netSpecs: the options of curl and wget that name files.
var netSpecs = sync.OnceValue(func() map[string]*optSpec {
	return map[string]*optSpec{
		"curl": opts(`+exact -o=w --output=w -O:O --remote-name:O --remote-name-all:O -J -D=w --dump-header=w
		-c=w --cookie-jar=w --trace=w --trace-ascii=w --stderr=w --libcurl=w --etag-save=w
		--hsts=w --alt-svc=w --output-dir=w -T=r --upload-file=r -K=rx --config=rx -b=b --cookie=b
		--cacert=r --capath=r -E=r --cert=r --key=r --netrc-file=r --proxy-cacert=r
		--proxy-capath=r --proxy-cert=r --proxy-key=r --crlfile=r --etag-compare=r -n:n --netrc:n
		--netrc-optional:n -d=@ --data=@ --data-binary=@ --data-ascii=@ --data-raw= --data-urlencode=@
		--json=@ -F=@ --form=@ --form-string= -H=@ --header=@ --proxy-header=@ -w=@ --write-out=@
		--url-query=@ --variable=@ -X= --request= -u= --user= -A= --user-agent= -e= --referer=
		-x= --proxy= -U= --proxy-user= -m= --max-time= --connect-timeout= --retry= -r= --range=
		--url= -s -S -L -f -i -I -k -v -q -g -G -N -Z -4 -6 -0 -1 -2 -3 -#
		--silent --show-error --location --fail --fail-with-body --include --head --insecure
		--verbose --compressed --http1.1 --http2 --get --globoff --no-buffer --parallel
		--create-dirs --remote-time --resolve= --connect-to= -y= -Y= --limit-rate= --interface=
		--unix-socket=r --abstract-unix-socket= --oauth2-bearer= --cookie= --help= -h= -V --version
		--location-trusted --max-redirs= --retry-delay= --retry-max-time= --retry-all-errors
		--keepalive-time= --no-keepalive --ssl --tlsv1.2 --tlsv1.3 --proto= --proto-redir=`),
		"wget": opts(`-O=w --output-document=w -o=w --output-file=w -a=w --append-output=w -P=w
		--directory-prefix=w --post-file=r --body-file=r -i=l --input-file=l --load-cookies=r
		--save-cookies=w --certificate=r --private-key=r --ca-certificate=r --ca-directory=r
		--crl-file=r --config=rx -e=x --execute=x --use-askpass=x --warc-file=w --rejected-log=w
		--post-data= --body-data= --method= --header= -U= --user-agent= -q --quiet -v --verbose
		-n= --no-verbose -c --continue -N --timestamping -r --recursive -l= --level= -k
		--convert-links -p --page-requisites --no-parent --no-directories -x
		--force-directories --no-host-directories -t= --tries= -T= --timeout= -w= --wait=
		--limit-rate= --user= --password= --no-check-certificate --https-only -S
		--server-response --spider -b --background -B= --base= -F --force-html -d --debug
		-4 -6 --inet4-only --inet6-only --no-cookies --keep-session-cookies --content-disposition
		--trust-server-names --mirror -m -A= --accept= -R= --reject= -D= --domains= -H
		--span-hosts --help -V --version`),
	}
})

// netUse records the files curl and wget read (uploads, @file data, keys, netrc) and
// write (outputs, cookie jars, traces).
func (g *guard) netUse(name string, ws []word, st *gstate) {
	p := netSpecs()[name].parse(ws)
	wroteCwd := name == "wget"
	for _, o := range p.opts {
		what := name + " " + o.as
		for k := 0; k < len(o.def.eff); k++ {
			switch o.def.eff[k] {
			case 'w':
				if o.hasVal {
					g.claim(o.val, OpWrite, st, what)
				}
				if o.def.name == "-P" || o.def.name == "--directory-prefix" {
					wroteCwd = false
				}
				if o.def.name == "-O" && name == "wget" || o.def.name == "--output-document" {
					wroteCwd = false
				}
			case 'r':
				if o.hasVal {
					g.claim(o.val, OpRead, st, what)
				}
			case 'l':
				if o.hasVal {
					g.claim(o.val, OpRead, st, what)
					g.claim(word{dyn: true, src: "the URLs listed in " + o.val.show()}, OpRead, st, what)
				}
			case 'x':
				g.a.reason(Ask, fmt.Sprintf("%s reads further options or runs a program", what))
			case 'O':
				wroteCwd = true
			case 'n':
				g.claim(word{lit: "~/.netrc"}, OpRead, st, what)
			case 'b':
				// -b NAME=VALUE is a cookie; -b FILE reads a cookie file.
				if o.hasVal && (o.val.dyn || !strings.Contains(o.val.lit, "=")) {
					g.claim(o.val, OpRead, st, what)
				}
			case '@':
				if o.hasVal {
					g.atFiles(o.val, st, what)
				}
			}
		}
	}
	if p.unknown != "" {
		// Any word may be the value of an option the guard does not know: @file and
		// name=@file forms are still reads.
		for _, w := range ws[1:] {
			g.atFiles(w, st, name)
		}
	}
	for _, w := range p.operands {
		if !w.dyn && strings.HasPrefix(w.lit, "@") {
			g.atFiles(w, st, name)
			continue
		}
		g.maybePath(w, st, false)
	}
	if wroteCwd {
		g.claim(word{lit: "."}, OpWrite, st, name)
	}
}

// atFiles claims the file of "@file", "name@file", "name=@file;type=..." and
// "name=<file" (curl's data, form and header forms).
func (g *guard) atFiles(w word, st *gstate, what string) {
	if w.dyn {
		if strings.Contains(w.src, "@") || strings.Contains(w.src, "<") {
			g.claim(w, OpRead, st, what)
		}
		return
	}
	s := w.lit
	i := strings.IndexAny(s, "@<")
	if i < 0 {
		return
	}
	if s[i] == '<' && (i == 0 || s[i-1] != '=') {
		return
	}
	f := s[i+1:]
	if j := strings.IndexAny(f, ";,"); j >= 0 {
		f = f[:j]
	}
	f = strings.Trim(f, `"`)
	if f == "" || f == "-" {
		return
	}
	if strings.HasPrefix(f, "~/") || f == "~" {
		f = expandHome(f, g.p.home)
	}
	g.claim(word{lit: f, src: f}, OpRead, st, what+" "+s[:i+1])
}

// zipUse: zip ARCHIVE FILES...; -r recurses (following symbolic links unless -y).
func (g *guard) zipUse(ws []word, st *gstate) {
	rec, keepLinks, archive := false, false, -1
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if w.dyn {
			g.claim(w, OpRead, st, "zip")
			continue
		}
		s := w.lit
		switch {
		case s == "-TT" || strings.HasPrefix(s, "--unzip-command") || s == "-T" || s == "--test":
			g.a.reason(Ask, "zip "+s+" runs a program to test the archive")
		case s == "-@" || s == "--names-stdin":
			g.claim(word{dyn: true, src: "the files named on standard input"}, OpRead, st, "zip -@")
		case s == "-O" || s == "--output-file" || s == "-b" || s == "--temp-path":
			if i+1 < len(ws) {
				i++
				g.claim(ws[i], OpWrite, st, "zip "+s)
			}
		case s == "--recurse-paths" || strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.ContainsAny(s, "rR"):
			rec = true
			keepLinks = keepLinks || strings.Contains(s, "y")
		case s == "--symlinks" || strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, "y"):
			keepLinks = true
		case strings.HasPrefix(s, "-"):
		case archive < 0:
			archive = i
			g.claim(w, OpWrite, st, "zip archive")
		default:
			if rec {
				g.claimTree(w, OpRead, st, "zip -r", !keepLinks)
			} else {
				g.claim(w, OpRead, st, "zip")
			}
		}
	}
}
