package vecstore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"sort"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// On-disk layout (format version 3, or 4 once the file holds an sq8r
// collection; versions 1 and 2 are read and upgraded by the first write).
// See doc.go for the description.
const (
	formatMagic = "cairn-vecstore\x00"
	// formatVersion is the newest version read: 4 adds sq8r collections
	// (their rows and centroid table), which version 3 readers would
	// misread; a file is marked 4 only when it gets one (putCollInfo).
	formatVersion = 4
	// writeVersion is what every file is brought to by its first write.
	writeVersion = 3
	// minFormatVersion is the oldest version read.
	minFormatVersion = 1
	// recVersion is the version byte inside every record value.
	recVersion = 1
	// snapChunk is the size of one snapshot chunk value.
	snapChunk = 4 << 20
)

var (
	bktMeta      = []byte("meta")
	bktTenants   = []byte("tenants")
	bktDatabases = []byte("databases")
	bktColls     = []byte("collections")
	bktCollNames = []byte("collnames")

	keyMagic   = []byte("magic")
	keyVersion = []byte("version")
	keySeq     = []byte("seq")

	subRec  = []byte("rec")
	subVec  = []byte("vec")
	subLog  = []byte("log")
	subSnap = []byte("snap")

	// keySnapIDs holds, in the snap bucket of a raw snapshot, the record id
	// of each dense id (encodeSnapIDs).
	keySnapIDs = []byte("ids")
	// keySnapMeta holds, in the snap bucket of a raw snapshot, the
	// metadata postings as of the snapshot (encodePostings).
	keySnapMeta = []byte("meta")
	// keySnapRowScales holds, in the snap bucket of an sq8r collection's
	// raw snapshot, the t of each row as of the snapshot (encodeRowScales).
	keySnapRowScales = []byte("rowt")
	// keyCentroids, in a collection's bucket, holds an sq8r collection's
	// centroid table once trained (encodeCentroids).
	keyCentroids = []byte("cent")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func collBucketName(id string) []byte { return []byte("c:" + id) }

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func u32(v uint32) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, v)
	return b
}

// sealed prefixes b with its CRC-32C.
func sealed(b []byte) []byte {
	out := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(out, crc(b))
	copy(out[4:], b)
	return out
}

// unseal checks and strips the CRC-32C prefix.
func unseal(b []byte, what string) ([]byte, error) {
	if len(b) < 4 {
		return nil, corruptf(nil, "%s: value too short (%d bytes)", what, len(b))
	}
	if got, want := crc(b[4:]), binary.BigEndian.Uint32(b); got != want {
		return nil, corruptf(nil, "%s: checksum mismatch (stored %08x, computed %08x)", what, want, got)
	}
	return b[4:], nil
}

// collInfo is the persisted description of a collection (JSON, sealed).
type collInfo struct {
	ID        string                  `json:"id"`
	Name      string                  `json:"name"`
	Tenant    string                  `json:"tenant"`
	Database  string                  `json:"database"`
	Metadata  chroma.Metadata         `json:"metadata,omitempty"`
	Config    chroma.CollectionConfig `json:"config"`
	Dimension int                     `json:"dimension"`
	Model     string                  `json:"model,omitempty"`
	NextOrder uint64                  `json:"next_order"`
	LastSeq   uint64                  `json:"last_seq"`
	// Graph snapshot: the change-log sequence it reflects, the dense-id bound
	// at that time, the number of chunks, the compressed length and its CRC-32C.
	SnapSeq    uint64 `json:"snap_seq,omitempty"`
	SnapNext   uint32 `json:"snap_next,omitempty"`
	SnapChunks int    `json:"snap_chunks,omitempty"`
	SnapLen    int64  `json:"snap_len,omitempty"`
	SnapCRC    uint32 `json:"snap_crc,omitempty"`
	// SnapGraph: the snapshot is index.MarshalGraph (no vectors; they are
	// read from the vec bucket). Snapshots written by format version 1
	// are index.MarshalBinary, vectors included.
	SnapGraph bool `json:"snap_graph,omitempty"`
	// SnapRaw: the snapshot is one uncompressed value (chunk 0), with the
	// record id of each dense id under keySnapIDs (format version 3);
	// otherwise it is zstd-compressed in chunks.
	SnapRaw bool `json:"snap_raw,omitempty"`
	// OpsSinceSnap counts records written since the snapshot.
	OpsSinceSnap int `json:"ops_since_snap,omitempty"`
}

func (ci *collInfo) public() chroma.Collection {
	return chroma.Collection{ID: ci.ID, Name: ci.Name, Tenant: ci.Tenant, Database: ci.Database,
		Metadata: ci.Metadata.Clone(), Config: ci.Config, Dimension: ci.Dimension, Model: ci.Model}
}

// vectorShape is what the vector rules judge a write or a query by (the
// name, model and dimension; unlike public, no copy of the metadata).
func (ci *collInfo) vectorShape() chroma.Collection {
	return chroma.Collection{Name: ci.Name, Model: ci.Model, Dimension: ci.Dimension}
}

func encodeCollInfo(ci *collInfo) ([]byte, error) {
	b, err := json.Marshal(ci)
	if err != nil {
		return nil, err
	}
	return sealed(b), nil
}

func decodeCollInfo(b []byte) (*collInfo, error) {
	p, err := unseal(b, "collection info")
	if err != nil {
		return nil, err
	}
	var ci collInfo
	if err := json.Unmarshal(p, &ci); err != nil {
		return nil, corruptf(err, "collection info: bad JSON")
	}
	return &ci, nil
}

func vecNorm(v []float32) float32 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return float32(math.Sqrt(s))
}

// record is one record in memory and (without the vector) in the rec bucket.
type record struct {
	id    string
	dense uint32
	order uint64
	vseq  uint64  // change-log sequence of the last embedding write
	norm  float32 // Euclidean norm of the vector as given (cosine graphs store it normalized)
	doc   *string
	uri   *string
	meta  chroma.Metadata // user metadata, nil when none
}

const (
	flagDoc  = 1
	flagURI  = 2
	flagMeta = 4
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func encodeRecord(r *record) []byte {
	b := make([]byte, 0, 64)
	b = append(b, recVersion)
	b = binary.BigEndian.AppendUint32(b, r.dense)
	b = binary.BigEndian.AppendUint64(b, r.order)
	b = binary.BigEndian.AppendUint64(b, r.vseq)
	b = binary.BigEndian.AppendUint32(b, math.Float32bits(r.norm))
	var flags byte
	if r.doc != nil {
		flags |= flagDoc
	}
	if r.uri != nil {
		flags |= flagURI
	}
	if r.meta != nil {
		flags |= flagMeta
	}
	b = append(b, flags)
	if r.doc != nil {
		b = appendString(b, *r.doc)
	}
	if r.uri != nil {
		b = appendString(b, *r.uri)
	}
	if r.meta != nil {
		keys := make([]string, 0, len(r.meta))
		for k := range r.meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			v := r.meta[k]
			b = appendString(b, k)
			b = append(b, byte(v.Kind))
			switch v.Kind {
			case where.KindString:
				b = appendString(b, v.Str)
			case where.KindInt:
				b = binary.BigEndian.AppendUint64(b, uint64(v.Int))
			case where.KindFloat:
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.Float))
			case where.KindBool:
				if v.Bool {
					b = append(b, 1)
				} else {
					b = append(b, 0)
				}
			}
		}
	}
	return sealed(b)
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("truncated or malformed value")
	}
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.fail()
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u8() byte {
	p := d.bytes(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *decoder) u32() uint32 {
	p := d.bytes(4)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint32(p)
}

func (d *decoder) u64() uint64 {
	p := d.bytes(8)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint64(p)
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	return string(d.bytes(int(n)))
}

// value reads a metadata value of kind k.
func (d *decoder) value(k where.Kind) where.Value {
	switch k {
	case where.KindString:
		return where.String(d.str())
	case where.KindInt:
		return where.Int(int64(d.u64()))
	case where.KindFloat:
		return where.Float(math.Float64frombits(d.u64()))
	case where.KindBool:
		return where.Bool(d.u8() != 0)
	}
	d.fail()
	return where.Value{}
}

func decodeRecord(id string, val []byte) (*record, error) {
	p, err := unsealRecord(id, val)
	if err != nil {
		return nil, err
	}
	d := &decoder{b: p}
	if v := d.u8(); v != recVersion && d.err == nil {
		return nil, corruptf(nil, "record %q: unknown record version %d", id, v)
	}
	r := &record{id: id}
	r.dense = d.u32()
	r.order = d.u64()
	r.vseq = d.u64()
	r.norm = math.Float32frombits(d.u32())
	flags := d.u8()
	if flags&flagDoc != 0 {
		s := d.str()
		r.doc = &s
	}
	if flags&flagURI != 0 {
		s := d.str()
		r.uri = &s
	}
	if flags&flagMeta != 0 {
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			d.fail()
		}
		r.meta = make(chroma.Metadata, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			k := d.str()
			r.meta[k] = d.value(where.Kind(d.u8()))
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, corruptf(d.err, "record %q", id)
	}
	return r, nil
}

// unsealRecord is unseal for record id's value, naming the record only
// when it fails (a collection's load unseals every record).
func unsealRecord(id string, val []byte) ([]byte, error) {
	if len(val) >= 4 && crc(val[4:]) == binary.BigEndian.Uint32(val) {
		return val[4:], nil
	}
	return unseal(val, fmt.Sprintf("record %q", id))
}

// decodeRecordMeta reads record id's dense id and, into md (cleared
// first), the values of its metadata keys that are among keys, leaving
// the rest of the record undecoded: a filter read where the records lie
// decodes only what it tests. It refuses what decodeRecord refuses.
func decodeRecordMeta(id []byte, val []byte, keys []string, md chroma.Metadata) (uint32, error) {
	clear(md)
	p, err := unsealRecord(string(id), val)
	if err != nil {
		return 0, err
	}
	d := &decoder{b: p}
	if v := d.u8(); v != recVersion && d.err == nil {
		return 0, corruptf(nil, "record %q: unknown record version %d", id, v)
	}
	dense := d.u32()
	d.bytes(8 + 8 + 4) // order, vector seq, norm
	flags := d.u8()
	skip := func() { d.bytes(int(min(d.uvarint(), uint64(len(d.b))+1))) }
	if flags&flagDoc != 0 {
		skip()
	}
	if flags&flagURI != 0 {
		skip()
	}
	if flags&flagMeta != 0 {
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			d.fail()
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			kb := d.bytes(int(min(d.uvarint(), uint64(len(d.b))+1)))
			key := ""
			for _, k := range keys {
				if string(kb) == k {
					key = k
					break
				}
			}
			kind := where.Kind(d.u8())
			if key == "" && kind == where.KindString {
				skip() // not copied out
				continue
			}
			if v := d.value(kind); key != "" {
				md[key] = v
			}
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return 0, corruptf(d.err, "record %q", id)
	}
	return dense, nil
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return sealed(b)
}

func decodeVector(val []byte, what string) ([]float32, error) {
	p, err := unseal(val, what)
	if err != nil {
		return nil, err
	}
	if len(p)%4 != 0 {
		return nil, corruptf(nil, "%s: length %d not a multiple of 4", what, len(p))
	}
	v := make([]float32, len(p)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return v, nil
}

func encodeLogEntry(ids []string) []byte {
	b := binary.AppendUvarint(nil, uint64(len(ids)))
	for _, id := range ids {
		b = appendString(b, id)
	}
	return sealed(b)
}

func decodeLogEntry(val []byte) ([]string, error) {
	p, err := unseal(val, "log entry")
	if err != nil {
		return nil, err
	}
	d := &decoder{b: p}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return nil, corruptf(nil, "log entry: bad count")
	}
	ids := make([]string, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		ids = append(ids, d.str())
	}
	if d.err != nil {
		return nil, corruptf(d.err, "log entry")
	}
	return ids, nil
}
