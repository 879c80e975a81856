package chromaapi

import (
	"math"
	"strconv"
)

// appendFloat appends f in the shortest round-trip form for the given bit
// size (32 or 64), laid out the way Chroma's serializer (serde_json, which
// uses the Ryū "pretty" layout) writes it: always with a decimal point or an
// exponent so that a float never reads back as an integer ("2.0", "1e20",
// "-0.0", "0.010000001"). Non-finite values are written as null, as
// serde_json does.
func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var tmp [40]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bits) // [-]d[.ddd]e±XX
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digits [24]byte
	n := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[n] = e[i]
			n++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	length := n
	kk := exp + 1 // 10^(kk-1) <= |f| < 10^kk
	k := kk - length
	maxKK, minKK := 16, -5
	if bits == 32 {
		maxKK, minKK = 13, -6
	}
	switch {
	case k >= 0 && kk <= maxKK:
		dst = append(dst, digits[:length]...)
		for j := length; j < kk; j++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	case kk > 0 && kk <= maxKK:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:length]...)
	case kk > minKK && kk <= 0:
		dst = append(dst, '0', '.')
		for j := 0; j < -kk; j++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:length]...)
	case length == 1:
		dst = append(dst, digits[0], 'e')
		return strconv.AppendInt(dst, int64(kk-1), 10)
	default:
		dst = append(dst, digits[0], '.')
		dst = append(dst, digits[1:length]...)
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(kk-1), 10)
	}
}
