package vecstore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// TestExpandRow: a row stored without its t field expands back to the row
// the index coded: bit for bit in L2 and IP (t is |x̂|², computed the same
// way), to float rounding in the cosine space (t is the scale s), for rows
// with a centroid and without; a row naming a centroid the table lacks, or
// of the wrong length, is corrupt.
func TestExpandRow(t *testing.T) {
	const dim, n = 16, index.TrainRows
	r := rand.New(rand.NewPCG(7, 7))
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(r.NormFloat64()) + float32(i%7)
		}
	}
	for _, space := range []chroma.Space{chroma.SpaceL2, chroma.SpaceIP, chroma.SpaceCosine} {
		ci := &collInfo{ID: "c", Dimension: dim}
		ci.Config.HNSW.Space = space
		ci.Config.HNSW.VectorCode = chroma.CodeSQ8R
		g, err := index.New(index.Options{Space: indexSpace(space), Dim: dim, Code: index.SQ8Residual})
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := g.EncodeRow(nil, vecs[0]) // untrained: no centroid
		table, err := g.TrainCentroids(vecs)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.SetCentroids(table); err != nil {
			t.Fatal(err)
		}
		rows := [][]byte{plain}
		for _, v := range vecs[:200] {
			row, err := g.EncodeRow(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row)
		}
		for i, row := range rows {
			got, err := expandRow(ci, table, storedRow(row))
			if err != nil {
				t.Fatalf("%s row %d: %v", space, i, err)
			}
			tw := math.Float32frombits(binary.LittleEndian.Uint32(row[rowT:]))
			tg := math.Float32frombits(binary.LittleEndian.Uint32(got[rowT:]))
			none := binary.LittleEndian.Uint16(row[12:]) == math.MaxUint16
			switch {
			case space == chroma.SpaceCosine && none: // t unread
			case space == chroma.SpaceCosine:
				if math.Abs(float64(tg-tw)) > 1e-5*float64(tw) {
					t.Errorf("%s row %d: t %v, coded %v", space, i, tg, tw)
				}
			case tg != tw:
				t.Errorf("%s row %d: t %v, coded %v", space, i, tg, tw)
			}
			binary.LittleEndian.PutUint32(got[rowT:], math.Float32bits(tw))
			if string(got) != string(row) {
				t.Fatalf("%s row %d: expanded row differs beyond t", space, i)
			}
		}
		if _, err := expandRow(ci, nil, storedRow(rows[1])); err == nil {
			t.Errorf("%s: a row with a centroid expanded without a table", space)
		}
		if _, err := expandRow(ci, table, storedRow(rows[1])[1:]); err == nil {
			t.Errorf("%s: a short row expanded", space)
		}
	}
}
