package quant

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"strings"
)

// Format version 3 is version 2 with the BERT encoder's Linear weights
// stored in the layout embed's integer kernels read, so that a reader uses
// them where they lie (the built-in model, in the binary's read-only data)
// instead of rearranging 22 MB at every start. The numbers are version 2's:
// Unpack gives back the version-2 file byte for byte, and the metadata
// entry UnpackedSHA256Key holds that file's SHA-256 (the model's identity
// stays the version-2 file's).
//
// Every Linear weight "name" of an encoder layer (attention.self.query, key
// and value, attention.output.dense, intermediate.dense, output.dense) that
// is I8 with groups of a multiple of 4 and a multiple of PanelCols output
// rows is replaced by two tensors; the query, key and value weights of a
// layer are first stacked by rows (in that order) into one weight named
// "<layer>.attention.self.qkv.weight":
//
//   - "name"+PanelsSuffix, I8 of shape [out, in]: panel p (output rows
//     p*PanelCols up to (p+1)*PanelCols) is in*PanelCols bytes holding, for
//     each quad of inputs k..k+3 and each of its PanelCols rows o, the four
//     bytes W[o][k..k+3];
//   - "name"+PanelScalesSuffix, F32 of shape [out/PanelCols, in/a, s], with a
//     = ActGroup(the weight group): for each panel and activation group, the
//     PanelCols row scales (the scale of the weight group holding it), and
//     for output.dense (s = 2*PanelCols: its input, a GELU output, is
//     quantized with a zero point) the PanelCols sums of the group's int8
//     weights.
//
// The metadata has VersionKey V3, LayoutKey Layout and UnpackedSHA256Key;
// other tensors are as in version 2.
const (
	// V3 is the packed format version.
	V3 = "3"
	// LayoutKey is the metadata entry naming the panel layout.
	LayoutKey = "cairn.panels"
	// Layout is the one panel layout: PanelCols rows per panel, quads of 4
	// inputs, activation groups of ActGroup.
	Layout = "int8-16x4-act32"
	// UnpackedSHA256Key is the metadata entry holding the hex SHA-256 of
	// the version-2 file Unpack returns.
	UnpackedSHA256Key = "cairn.unpacked_sha256"
	// PanelCols is the number of output rows per panel.
	PanelCols = 16
	// PanelsSuffix and PanelScalesSuffix name a packed weight's tensors.
	PanelsSuffix      = "_panels"
	PanelScalesSuffix = "_panel_scales"
	// QKV is the name, after a layer's prefix, of its stacked query, key
	// and value weight.
	QKV = "attention.self.qkv.weight"
)

// ActGroup is the activation group for weights in groups of wgroup (a
// multiple of 4): 32 values when it divides wgroup, else wgroup.
func ActGroup(wgroup int) int {
	if wgroup%32 == 0 {
		return 32
	}
	return wgroup
}

// Panels lays out the int8 weight q of shape [out, in] with one scale per
// group of wgroup values of a row (scale[o*in/wgroup + g]) in the panel
// layout; unsigned adds the column sums. Padding rows of a last partial
// panel are zero.
func Panels(q []byte, scale []float32, out, in, wgroup int, unsigned bool) ([]byte, []float32) {
	ag := ActGroup(wgroup)
	groups, wgroups := in/ag, in/wgroup
	panels := (out + PanelCols - 1) / PanelCols
	ss := PanelCols
	if unsigned {
		ss = 2 * PanelCols
	}
	pq := make([]byte, panels*in*PanelCols)
	ps := make([]float32, panels*groups*ss)
	for o := 0; o < out; o++ {
		p, j := o/PanelCols, o%PanelCols
		dst := pq[p*in*PanelCols+4*j:]
		src := q[o*in : (o+1)*in]
		for k := 0; k < in; k += 4 {
			copy(dst[k*PanelCols:k*PanelCols+4], src[k:k+4])
		}
		sc := ps[p*groups*ss+j:]
		for gi := 0; gi < groups; gi++ {
			sc[gi*ss] = scale[o*wgroups+gi*ag/wgroup]
			if unsigned {
				var sum int32
				for _, v := range src[gi*ag : (gi+1)*ag] {
					sum += int32(int8(v))
				}
				sc[gi*ss+PanelCols] = float32(sum)
			}
		}
	}
	return pq, ps
}

// linearWeight matches the Linear weights Pack lays out; the second group
// is the module.
var linearWeight = regexp.MustCompile(`^(.*encoder\.layer\.\d+\.)(attention\.self\.query|attention\.self\.key|attention\.self\.value|attention\.output\.dense|intermediate\.dense|output\.dense)\.weight$`)

// Pack rewrites a version-2 file as version 3. b must be in the form
// Quantize writes (Pack checks that Unpack gives b back).
func Pack(b []byte) ([]byte, error) {
	ts, meta, err := read(b)
	if err != nil {
		return nil, err
	}
	if meta[Key] != Int8PerGroup || meta[VersionKey] != V2 {
		return nil, fmt.Errorf("pack: want %s %q version %s, have %q version %q", Key, Int8PerGroup, V2, meta[Key], meta[VersionKey])
	}
	byName := map[string]tensor{}
	for _, t := range ts {
		byName[t.name] = t
	}
	// int8 weight name -> its values, scales and weight group, for the
	// Linear weights that can be packed.
	type weight struct {
		q           []byte
		scale       []float32
		out, in, wg int
	}
	packable := func(name string) (weight, bool) {
		t, ok := byName[name]
		s, sok := byName[name+ScaleSuffix]
		if !ok || !sok || t.dtype != "I8" || s.dtype != "F32" || len(t.shape) != 2 || len(s.shape) != 2 ||
			s.shape[0] != t.shape[0] || s.shape[1] <= 0 || t.shape[1]%s.shape[1] != 0 || len(t.data) != numel(t.shape) || len(s.data) != 4*numel(s.shape) {
			return weight{}, false
		}
		w := weight{q: t.data, out: t.shape[0], in: t.shape[1], wg: t.shape[1] / s.shape[1]}
		if w.wg%4 != 0 || w.out%PanelCols != 0 {
			return weight{}, false
		}
		w.scale = make([]float32, numel(s.shape))
		for i := range w.scale {
			w.scale[i] = math.Float32frombits(binary.LittleEndian.Uint32(s.data[4*i:]))
		}
		return w, true
	}
	drop := map[string]bool{}
	var out []tensor
	emit := func(name string, ws []weight, unsigned bool) {
		var pq []byte
		var ps []float32
		rows := 0
		for _, w := range ws {
			q, s := Panels(w.q, w.scale, w.out, w.in, w.wg, unsigned)
			pq, ps = append(pq, q...), append(ps, s...)
			rows += w.out
		}
		in, ag := ws[0].in, ActGroup(ws[0].wg)
		out = append(out,
			tensor{name + PanelsSuffix, "I8", []int{rows, in}, pq},
			tensor{name + PanelScalesSuffix, "F32", []int{rows / PanelCols, in / ag, len(ps) / (rows / PanelCols) / (in / ag)}, float32Bytes(ps)})
	}
	for _, t := range ts {
		m := linearWeight.FindStringSubmatch(t.name)
		if m == nil || drop[t.name] {
			continue
		}
		prefix, module := m[1], m[2]
		if !strings.HasPrefix(module, "attention.self.") {
			if w, ok := packable(t.name); ok {
				emit(t.name, []weight{w}, module == "output.dense")
				drop[t.name], drop[t.name+ScaleSuffix] = true, true
			}
			continue
		}
		var ws []weight
		for _, part := range []string{"query", "key", "value"} {
			if w, ok := packable(prefix + "attention.self." + part + ".weight"); ok && (len(ws) == 0 || w.in == ws[0].in && w.wg == ws[0].wg) {
				ws = append(ws, w)
			}
		}
		if len(ws) == 3 {
			emit(prefix+QKV, ws, false)
			for _, part := range []string{"query", "key", "value"} {
				n := prefix + "attention.self." + part + ".weight"
				drop[n], drop[n+ScaleSuffix] = true, true
			}
		}
	}
	for _, t := range ts {
		if !drop[t.name] {
			out = append(out, t)
		}
	}
	sum := sha256.Sum256(b)
	meta3 := maps.Clone(meta)
	meta3[VersionKey], meta3[LayoutKey], meta3[UnpackedSHA256Key] = V3, Layout, hex.EncodeToString(sum[:])
	packed, err := write(out, meta3)
	if err != nil {
		return nil, err
	}
	if back, err := Unpack(packed); err != nil || !bytes.Equal(back, b) {
		return nil, fmt.Errorf("pack: the input is not in the form Quantize writes (unpacking does not give it back: %v)", err)
	}
	return packed, nil
}

// ErrNotUnpacked reports a version-3 file that does not unpack to the
// version-2 file its metadata names.
var ErrNotUnpacked = errors.New("quant: packed weights do not unpack to the recorded file")

// Unpack rewrites a version-3 file as the version-2 file it was packed
// from and checks it against UnpackedSHA256Key.
func Unpack(b []byte) ([]byte, error) {
	ts, meta, err := read(b)
	if err != nil {
		return nil, err
	}
	if meta[Key] != Int8PerGroup || meta[VersionKey] != V3 || meta[LayoutKey] != Layout {
		return nil, fmt.Errorf("unpack: want %s %q version %s layout %q, have %q version %q layout %q", Key, Int8PerGroup, V3, Layout, meta[Key], meta[VersionKey], meta[LayoutKey])
	}
	byName := map[string]tensor{}
	for _, t := range ts {
		byName[t.name] = t
	}
	var out []tensor
	for _, t := range ts {
		if strings.HasSuffix(t.name, PanelScalesSuffix) {
			continue
		}
		name, packed := strings.CutSuffix(t.name, PanelsSuffix)
		if !packed {
			out = append(out, t)
			continue
		}
		s, ok := byName[name+PanelScalesSuffix]
		if !ok || t.dtype != "I8" || s.dtype != "F32" || len(t.shape) != 2 || len(s.shape) != 3 {
			return nil, fmt.Errorf("%w: %s: bad panel tensors", ErrNotUnpacked, name)
		}
		parts := []string{name}
		if prefix, ok := strings.CutSuffix(name, QKV); ok {
			parts = []string{prefix + "attention.self.query.weight", prefix + "attention.self.key.weight", prefix + "attention.self.value.weight"}
		}
		ws, err := unpanel(t, s, len(parts))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNotUnpacked, name, err)
		}
		for i, part := range parts {
			out = append(out, tensor{part, "I8", ws[i].shape, ws[i].q}, tensor{part + ScaleSuffix, "F32", ws[i].scaleShape, float32Bytes(ws[i].scale)})
		}
	}
	meta2 := maps.Clone(meta)
	want := meta2[UnpackedSHA256Key]
	delete(meta2, LayoutKey)
	delete(meta2, UnpackedSHA256Key)
	meta2[VersionKey] = V2
	v2, err := write(out, meta2)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(v2); hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("%w: SHA-256 %x, recorded %s", ErrNotUnpacked, sum, want)
	}
	return v2, nil
}

type unpanelled struct {
	shape, scaleShape []int
	q                 []byte
	scale             []float32
}

// unpanel inverts Panels for a panel tensor t with its scales s, split by
// rows into n equal weights; the weight group is the one Quantize chose
// for the row length. Scales repeated across activation groups and the
// column sums must agree with the weights.
func unpanel(t, s tensor, n int) ([]unpanelled, error) {
	out, in := t.shape[0], t.shape[1]
	if out <= 0 || in <= 0 || out%(n*PanelCols) != 0 || len(t.data) != out*in || len(s.data) != 4*numel(s.shape) {
		return nil, fmt.Errorf("shape %v", t.shape)
	}
	wg := in
	if in >= GroupSize && in%GroupSize == 0 {
		wg = GroupSize
	}
	ag := ActGroup(wg)
	panels, groups, ss := out/PanelCols, in/ag, s.shape[2]
	if wg%4 != 0 || s.shape[0] != panels || s.shape[1] != groups || (ss != PanelCols && ss != 2*PanelCols) {
		return nil, fmt.Errorf("panel scales of shape %v for a weight %v", s.shape, t.shape)
	}
	scales := make([]float32, numel(s.shape))
	for i := range scales {
		scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(s.data[4*i:]))
	}
	q := make([]byte, out*in)
	scale := make([]float32, out*(in/wg))
	for o := 0; o < out; o++ {
		p, j := o/PanelCols, o%PanelCols
		src := t.data[p*in*PanelCols+4*j:]
		dst := q[o*in : (o+1)*in]
		for k := 0; k < in; k += 4 {
			copy(dst[k:k+4], src[k*PanelCols:k*PanelCols+4])
		}
		for g := 0; g < in/wg; g++ {
			scale[o*(in/wg)+g] = scales[(p*groups+g*wg/ag)*ss+j]
		}
	}
	// The whole panel form must be what Panels makes of the result.
	rows := out / n
	var res []unpanelled
	for i := 0; i < n; i++ {
		u := unpanelled{shape: []int{rows, in}, scaleShape: []int{rows, in / wg},
			q: q[i*rows*in : (i+1)*rows*in], scale: scale[i*rows*(in/wg) : (i+1)*rows*(in/wg)]}
		pq, ps := Panels(u.q, u.scale, rows, in, wg, ss == 2*PanelCols)
		off := i * rows / PanelCols
		if !bytes.Equal(pq, t.data[off*in*PanelCols:(off+rows/PanelCols)*in*PanelCols]) ||
			!bytes.Equal(float32Bytes(ps), s.data[4*off*groups*ss:4*(off+rows/PanelCols)*groups*ss]) {
			return nil, errors.New("panel scales or column sums disagree with the weights")
		}
		res = append(res, u)
	}
	return res, nil
}

func float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// UnpackedSHA256 returns the SHA-256 a version-3 file records for the
// version-2 file it unpacks to (the model's identity), reading only the
// header; ok is false for any other file.
func UnpackedSHA256(b []byte) (sum string, ok bool) {
	if len(b) < 8 {
		return "", false
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > uint64(len(b)-8) {
		return "", false
	}
	var h struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if json.Unmarshal(b[8:8+hl], &h) != nil || h.Meta[VersionKey] != V3 || h.Meta[Key] != Int8PerGroup {
		return "", false
	}
	sum = h.Meta[UnpackedSHA256Key]
	if d, err := hex.DecodeString(sum); err != nil || len(d) != sha256.Size {
		return "", false
	}
	return sum, true
}
