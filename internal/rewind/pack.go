package rewind

import (
	"compress/flate"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Packs. A snapshot's new objects are appended to one file, the pack of the process
// (packs/<time>-<random>.pack), in one write: creating a file costs ext4 far more
// CPU than appending to one (inode allocation: 0.3 ms and up), and even a small
// change makes three objects or more (the blob, its directory's tree, each parent's
// tree), the first snapshot of a run one per file.
//
// A pack is a sequence of batches, each self-describing:
//
//	"RWB1" | count uint32 | data length uint64 | CRC-32 (IEEE) of the previous 12 bytes and the index
//	count × (SHA-256 of the raw content [32]byte | deflated length uint32)
//	the deflated objects, in index order
//
// Integers are little-endian. A reader takes the batches up to the first that is
// incomplete or does not check, so a crash mid-write leaves a store that reads as
// before it: checkpoint records are appended only after their objects' batch, so
// none names an object of a torn batch, and Prune drops the torn bytes. Only the
// process that made a pack appends to it.
const (
	packDirName  = "packs"
	packExt      = ".pack"
	batchMagic   = "RWB1"
	batchHdrLen  = 20
	batchEntLen  = 36
	maxBatchData = 1 << 20 // a batch is written once it holds this much
	// packRotate: a writer starts a new pack rather than append to one it last
	// appended to this long ago, so that a pack Prune may rewrite (one older than
	// its grace period) is never appended to at the same time.
	packRotate = pruneGrace / 2
)

// The checksum is CRC-32 IEEE, not Castagnoli: the first use of a Castagnoli
// table costs 1.3 million instructions (its SSE 4.2 tables), that of IEEE 20,000.

// packLoc is where a packed object's deflated bytes are.
type packLoc struct {
	pack string // file name in the pack directory
	off  int64
	n    uint32
}

// packRef is a packLoc in the index: keys and values without pointers keep a large
// store's index small and out of the garbage collector's scans.
type packRef struct {
	off  int64
	n    uint32
	pack uint32 // in objects.packNames
}

// packID returns the number of the pack named name in the index (mu held).
func (o *objects) packID(name string) uint32 {
	id, ok := o.packIDs[name]
	if !ok {
		id = uint32(len(o.packNames))
		o.packNames = append(o.packNames, name)
		o.packIDs[name] = id
	}
	return id
}

// batch collects a snapshot's new objects until they are written to the pack.
type batch struct {
	index  []byte // count × batchEntLen
	data   []byte
	hashes []string
}

func (b *batch) empty() bool { return len(b.hashes) == 0 }

func (b *batch) reset() {
	if cap(b.data) > 2*maxBatchData {
		b.data = nil // a large file's batch is not kept for the next snapshot
	}
	b.index, b.data, b.hashes = b.index[:0], b.data[:0], b.hashes[:0]
}

// storedMax: smaller objects are kept as a deflate stored block (uncompressed).
// Compressing costs a fixed ~40 µs (the compressor's reset and Huffman tables),
// more than the rest of a checkpoint's work on a small object, for a few hundred
// bytes saved; readers inflate both alike.
const storedMax = 4 << 10

// add deflates data (the content of h) into b.
func (o *objects) add(b *batch, h string, data []byte) {
	start := len(b.data)
	if len(data) < storedMax {
		// One final stored block: BFINAL=1 BTYPE=00, LEN, NLEN (RFC 1951 3.2.4).
		n := uint16(len(data))
		b.data = append(b.data, 1, byte(n), byte(n>>8), byte(^n), byte(^n>>8))
		b.data = append(b.data, data...)
	} else {
		o.mu.Lock()
		o.buf.Reset()
		if o.zw == nil {
			o.zw, _ = flate.NewWriter(&o.buf, flate.BestSpeed)
		} else {
			o.zw.Reset(&o.buf)
		}
		o.zw.Write(data)
		o.zw.Close()
		b.data = append(b.data, o.buf.Bytes()...)
		o.mu.Unlock()
	}
	var ent [batchEntLen]byte
	hex.Decode(ent[:32], []byte(h))
	binary.LittleEndian.PutUint32(ent[32:], uint32(len(b.data)-start))
	b.index = append(b.index, ent[:]...)
	b.hashes = append(b.hashes, h)
}

func (o *objects) packDir() string { return filepath.Join(filepath.Dir(o.dir), packDirName) }

// flush appends b to the process's pack in one write and returns the bytes
// written; b is then empty. On an error nothing of b is stored, and the pack,
// which may end in a torn batch, is not appended to again.
func (o *objects) flush(b *batch) (int64, error) {
	if b.empty() {
		return 0, nil
	}
	defer b.reset()
	o.mu.Lock()
	defer o.mu.Unlock()
	out := appendBatchHeader(o.wbuf[:0], len(b.hashes), uint64(len(b.data)), b.index)
	out = append(out, b.index...)
	out = append(out, b.data...)
	if cap(out) <= 2*maxBatchData {
		o.wbuf = out
	}
	f, base, err := o.packForAppend()
	if err != nil {
		return 0, fmt.Errorf("store objects: %w", err)
	}
	if _, err := f.Write(out); err != nil {
		o.closePack()
		return 0, fmt.Errorf("store objects: %w", err)
	}
	o.wEnd = base + int64(len(out))
	if o.idx != nil {
		id := o.packID(o.wName)
		off := base + batchHdrLen + int64(len(b.index))
		for i := range b.hashes {
			e := b.index[i*batchEntLen:]
			n := binary.LittleEndian.Uint32(e[32:])
			o.idx[[32]byte(e[:32])] = packRef{off: off, n: n, pack: id}
			off += int64(n)
		}
	}
	return int64(len(out)), nil
}

// appendBatchHeader appends the header of a batch of count objects, dlen bytes of
// data, with the given index.
func appendBatchHeader(b []byte, count int, dlen uint64, index []byte) []byte {
	start := len(b)
	b = append(b, batchMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(count))
	b = binary.LittleEndian.AppendUint64(b, dlen)
	crc := crc32.Update(crc32.ChecksumIEEE(b[start+4:start+16]), crc32.IEEETable, index)
	return binary.LittleEndian.AppendUint32(b, crc)
}

// packForAppend returns the pack to append to and its size (mu held): the one this
// process made, unless it was removed (by hand, or rewritten by a Prune) or last
// appended to long ago; else a new one.
func (o *objects) packForAppend() (*os.File, int64, error) {
	if o.w != nil {
		fi, err := o.w.Stat()
		if err == nil && !unlinked(fi) && fi.Size() == o.wEnd && time.Since(fi.ModTime()) < packRotate {
			return o.w, o.wEnd, nil
		}
		o.closePack()
	}
	name := newPackName()
	p := filepath.Join(o.packDir(), name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(o.packDir(), 0o700); err == nil {
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	o.w, o.wName, o.wEnd = f, name, 0
	return f, 0, nil
}

// newPackName names a new pack: its time, so names sort in the order made, and a
// random part, so that no two processes make the same.
func newPackName() string {
	return fmt.Sprintf("%016x-%s%s", time.Now().UnixNano(), strings.ToLower(rand.Text()[:8]), packExt)
}

func (o *objects) closePack() {
	if o.w != nil {
		o.w.Close()
	}
	o.w, o.wName, o.wEnd = nil, "", 0
}

// locate returns where h is packed (mu held), reading the packs' indexes when they
// were not read yet.
func (o *objects) locate(h string) (packLoc, bool) {
	if o.idx == nil {
		o.loadPacks()
	}
	var key [32]byte
	if len(h) != 64 {
		return packLoc{}, false
	}
	if _, err := hex.Decode(key[:], []byte(h)); err != nil {
		return packLoc{}, false
	}
	r, ok := o.idx[key]
	if !ok {
		return packLoc{}, false
	}
	return packLoc{pack: o.packNames[r.pack], off: r.off, n: r.n}, true
}

// packed reports whether h is in a pack that is still there (mu held): a Prune
// rewrites packs, and a store may be removed by hand. A pack is looked at once a
// snapshot: the first of a process asks about every file of the stat cache.
func (o *objects) packed(h string) bool {
	l, ok := o.locate(h)
	if !ok {
		return false
	}
	if o.verified[l.pack] {
		return true
	}
	if _, err := os.Lstat(filepath.Join(o.packDir(), l.pack)); err == nil {
		if o.verified == nil {
			o.verified = map[string]bool{}
		}
		o.verified[l.pack] = true
		return true
	}
	o.forgetPacks()
	_, ok = o.locate(h)
	return ok
}

// forgetPacks drops the packs' index (mu held): a Prune may have rewritten packs.
func (o *objects) forgetPacks() {
	o.idx, o.packNames, o.packIDs, o.verified, o.looseChecked = nil, nil, nil, nil, false
}

// loadPacks indexes the batches of every pack (mu held).
func (o *objects) loadPacks() {
	o.idx, o.packNames, o.packIDs = map[[32]byte]packRef{}, nil, map[string]uint32{}
	des, err := os.ReadDir(o.packDir())
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, packExt) || !de.Type().IsRegular() {
			continue
		}
		id := o.packID(name)
		scanPack(filepath.Join(o.packDir(), name), func(key [32]byte, l packLoc) {
			o.idx[key] = packRef{off: l.off, n: l.n, pack: id}
		})
	}
}

// scanPack calls fn for each object (its SHA-256 and place) of the valid batches
// of the pack at p, and returns the offset where valid batches end.
func scanPack(p string, fn func(key [32]byte, l packLoc)) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return scanBatches(f, fi.Size(), 0, fn), nil
}

// scanBatches reads batches of r (size bytes) from off on, up to the first that is
// incomplete or damaged.
func scanBatches(r io.ReaderAt, size, off int64, fn func(key [32]byte, l packLoc)) int64 {
	win := window{r: r}
	for off+batchHdrLen <= size {
		hdr, err := win.at(off, batchHdrLen)
		if err != nil || string(hdr[:4]) != batchMagic {
			break
		}
		count := int64(binary.LittleEndian.Uint32(hdr[4:]))
		dlen := binary.LittleEndian.Uint64(hdr[8:])
		crc := binary.LittleEndian.Uint32(hdr[16:])
		sum := crc32.ChecksumIEEE(hdr[4:16])
		ilen := count * batchEntLen
		if count == 0 || ilen > size-off-batchHdrLen || dlen > uint64(size-off-batchHdrLen-ilen) {
			break // torn (or not a batch)
		}
		index, err := win.at(off+batchHdrLen, int(ilen))
		if err != nil || crc32.Update(sum, crc32.IEEETable, index) != crc {
			break
		}
		var total uint64
		for i := int64(0); i < count; i++ {
			total += uint64(binary.LittleEndian.Uint32(index[i*batchEntLen+32:]))
		}
		if total != dlen {
			break
		}
		pos := off + batchHdrLen + ilen
		for i := int64(0); i < count; i++ {
			e := index[i*batchEntLen:]
			n := binary.LittleEndian.Uint32(e[32:])
			fn([32]byte(e[:32]), packLoc{off: pos, n: n})
			pos += int64(n)
		}
		off = pos
	}
	return off
}

// window reads a file in blocks of 64 KiB, so that the headers and indexes of a
// pack of small batches cost one read.
type window struct {
	r    io.ReaderAt
	base int64
	buf  []byte
}

func (w *window) at(off int64, n int) ([]byte, error) {
	if off >= w.base && off+int64(n) <= w.base+int64(len(w.buf)) {
		return w.buf[off-w.base : off-w.base+int64(n)], nil
	}
	m := max(n, 64<<10)
	if cap(w.buf) < m {
		w.buf = make([]byte, m)
	}
	got, err := w.r.ReadAt(w.buf[:m], off)
	w.base, w.buf = off, w.buf[:got]
	if got < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return w.buf[:n], nil
}

// readPacked returns the content of h from its pack, checked against its hash.
func (o *objects) readPacked(l packLoc, h string) ([]byte, error) {
	f, err := os.Open(filepath.Join(o.packDir(), l.pack))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(flate.NewReader(io.NewSectionReader(f, l.off, int64(l.n))))
	if err != nil {
		return nil, fmt.Errorf("read object %s: %w", h[:12], err)
	}
	if hashOf(data) != h {
		return nil, fmt.Errorf("object %s is damaged", h[:12])
	}
	return data, nil
}
