package vecstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	bolt "go.etcd.io/bbolt"
)

// RepairReport says what Repair kept and dropped.
type RepairReport struct {
	Collections     int // collections copied
	Records         int // records copied
	DroppedRecords  int // records whose record or vector failed its checksum
	DroppedBuckets  int // collections or buckets that could not be read at all
	GraphsRebuilt   int // graphs rebuilt from the stored vectors
	PreviousVersion string
}

// Repair rewrites the store in dir: it copies every readable tenant,
// database, collection and record (with its vector) into a fresh file,
// drops what fails its checksum (reported), rebuilds each collection's
// graph from the stored vectors, writes new snapshots, and atomically
// replaces the old file (kept as vectors.db.bak). Other processes must not
// hold the store open for writing meanwhile (they would wait on the lock).
func Repair(ctx context.Context, dir string, opts Options) (rep RepairReport, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	path := filepath.Join(dir, dbFileName)
	tmp := path + ".repair"
	_ = os.Remove(tmp)
	timeout := opts.LockTimeout
	if timeout == 0 {
		timeout = 30_000_000_000
	}
	lk, err := lockFile(ctx, filepath.Join(dir, lockFileName), true, timeout)
	if err != nil {
		return rep, err
	}
	defer lk.unlock()
	old, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		return rep, corruptf(err, "cannot open %s even for repair", path)
	}
	defer old.Close()
	nw, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: timeout, NoSync: true, PageSize: pageSize})
	if err != nil {
		return rep, err
	}
	nw.AllocSize = allocSize
	defer func() {
		if nw != nil {
			nw.Close()
			os.Remove(tmp)
		}
	}()
	s := &Store{opts: opts}
	if s.opts.Seed == 0 {
		s.opts.Seed = 1
	}
	seq, infos, err := copyTables(old, nw, &rep)
	if err != nil {
		return rep, err
	}
	seq += 1 << 20 // every process reloads everything
	sort.Slice(infos, func(i, j int) bool { return infos[i].ID < infos[j].ID })
	for _, ci := range infos {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if err := repairCollection(s, old, nw, ci, seq, &rep); err != nil {
			return rep, fmt.Errorf("vecstore: repair collection %s: %w", ci.ID, err)
		}
	}
	if err := nw.Update(func(tx *bolt.Tx) error { return tx.Bucket(bktMeta).Put(keySeq, u64(seq)) }); err != nil {
		return rep, err
	}
	if err := nw.Sync(); err != nil {
		return rep, err
	}
	if err := nw.Close(); err != nil {
		return rep, err
	}
	nw = nil
	bak, err := replaceWithRepaired(dir, path, tmp)
	if err != nil {
		return rep, err
	}
	writeSeqHint(filepath.Join(dir, seqFileName), seq)
	rep.PreviousVersion = bak
	return rep, nil
}

// copyTables copies the top-level tables (tenants, databases) of old into
// nw and returns the old change-log sequence and the readable collections'
// descriptions.
func copyTables(old, nw *bolt.DB, rep *RepairReport) (seq uint64, infos []*collInfo, err error) {
	err = old.View(func(otx *bolt.Tx) (rerr error) {
		defer guard(&rerr)
		if err := checkFormat(otx); err != nil {
			if errors.Is(err, chroma.ErrIncompatibleFormat) {
				return err
			}
			// A damaged meta bucket: start the sequence high enough to
			// force every process to reload.
		} else {
			seq = readSeq(otx)
		}
		return nw.Update(func(ntx *bolt.Tx) error {
			if err := initLayout(ntx); err != nil {
				return err
			}
			for _, name := range [][]byte{bktTenants, bktDatabases} {
				ob := otx.Bucket(name)
				if ob == nil {
					rep.DroppedBuckets++
					continue
				}
				if err := copyBucket(ob, ntx.Bucket(name), rep); err != nil {
					return err
				}
			}
			if ob := otx.Bucket(bktColls); ob != nil {
				safeForEach(ob, rep, func(k, v []byte) {
					ci, err := decodeCollInfo(v)
					if err != nil || ci.ID != string(k) {
						rep.DroppedBuckets++
						return
					}
					infos = append(infos, ci)
				})
			}
			return nil
		})
	})
	return seq, infos, err
}

// replaceWithRepaired keeps the damaged file at path as path.bak, then moves
// the repaired file tmp in its place, while the caller still holds the old
// file's exclusive lock. It returns the backup's path.
func replaceWithRepaired(dir, path, tmp string) (string, error) {
	bak := path + ".bak"
	_ = os.Remove(bak)
	if err := os.Link(path, bak); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return bak, nil
}

func writeSeqHint(path string, seq uint64) {
	s := &Store{seqPath: path}
	s.log = discardLogger()
	s.writeSeqFile(seq)
}

// safeForEach iterates b, stopping (and counting a dropped bucket) if bbolt
// panics on a damaged page.
func safeForEach(b *bolt.Bucket, rep *RepairReport, fn func(k, v []byte)) {
	defer func() {
		if r := recover(); r != nil {
			rep.DroppedBuckets++
		}
	}()
	_ = b.ForEach(func(k, v []byte) error {
		if v != nil {
			fn(k, v)
		}
		return nil
	})
}

func copyBucket(from, to *bolt.Bucket, rep *RepairReport) error {
	var err error
	safeForEach(from, rep, func(k, v []byte) {
		if err == nil {
			err = to.Put(append([]byte(nil), k...), append([]byte(nil), v...))
		}
	})
	return err
}

// repairItem is a record that survived repair, with its vector.
type repairItem struct {
	r  *record
	gv graphVec
}

// repairCollection copies collection ci's readable records from old into
// nw, in insertion order, with a graph rebuilt from their vectors.
func repairCollection(s *Store, old, nw *bolt.DB, ci *collInfo, seq uint64, rep *RepairReport) error {
	items, table, err := salvageRecords(old, ci, rep)
	if err != nil {
		return err
	}
	sort.Slice(items, func(i, j int) bool { return items[i].r.order < items[j].r.order })
	ni := *ci
	ni.LastSeq = seq
	ni.SnapSeq, ni.SnapNext, ni.SnapChunks, ni.SnapLen, ni.SnapCRC, ni.OpsSinceSnap, ni.SnapGraph, ni.SnapRaw = 0, 0, 0, 0, 0, 0, false, false
	var comp []byte
	var next uint32
	if len(items) > 0 {
		if ni.Dimension == 0 {
			ni.Dimension = len(items[0].gv.v)
		}
		if comp, next, err = s.rebuildSnapshot(&ni, items, table); err != nil {
			return err
		}
		rep.GraphsRebuilt++
	}
	return nw.Update(func(tx *bolt.Tx) error {
		return putRepairedCollection(tx, &ni, items, table, comp, next, seq, rep)
	})
}

// salvageRecords reads collection ci's records whose record and vector
// decode, counting the others as dropped, and an sq8r collection's
// centroid table (nil when it has none or it is damaged: then its rows
// coded against a centroid are dropped). A dense id claimed twice keeps
// its first record.
func salvageRecords(old *bolt.DB, ci *collInfo, rep *RepairReport) (items []repairItem, table []float32, err error) {
	err = old.View(func(otx *bolt.Tx) (rerr error) {
		defer guard(&rerr)
		cb := otx.Bucket(collBucketName(ci.ID))
		if cb == nil || cb.Bucket(subRec) == nil || cb.Bucket(subVec) == nil {
			rep.DroppedBuckets++
			return nil
		}
		vecB := cb.Bucket(subVec)
		if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R {
			if t, terr := readCentroids(cb, ci); terr == nil {
				table = t
			}
		}
		used := make(map[uint32]bool)
		safeForEach(cb.Bucket(subRec), rep, func(k, v []byte) {
			r, err := decodeRecord(string(k), v)
			if err != nil || used[r.dense] {
				rep.DroppedRecords++
				return
			}
			var gv graphVec
			func() {
				defer func() {
					if recover() != nil {
						err = corruptf(nil, "vector page")
					}
				}()
				gv, err = readVector(vecB, ci, table, r.dense)
			}()
			if err != nil || (gv.row == nil && ci.Dimension != 0 && len(gv.v) != ci.Dimension) {
				rep.DroppedRecords++
				return
			}
			used[r.dense] = true
			items = append(items, repairItem{r, gv})
		})
		return nil
	})
	return items, table, err
}

// rebuildSnapshot builds collection ni's graph from items and returns its
// compressed snapshot and the next free dense id.
func (s *Store) rebuildSnapshot(ni *collInfo, items []repairItem, table []float32) (comp []byte, next uint32, err error) {
	g, err := s.newGraph(ni)
	if err != nil {
		return nil, 0, err
	}
	if table != nil {
		if err := g.SetCentroids(table); err != nil {
			return nil, 0, err
		}
	}
	ids := make([]uint32, len(items))
	vs := make([][]float32, len(items))
	rows := make([][]byte, len(items))
	for i, it := range items {
		ids[i], vs[i], rows[i] = it.r.dense, it.gv.v, it.gv.row
		if it.r.dense >= next {
			next = it.r.dense + 1
		}
	}
	if ni.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		err = g.InsertRows(context.Background(), ids, rows)
	} else {
		err = g.InsertBatch(context.Background(), ids, vs)
	}
	if err != nil {
		return nil, 0, err
	}
	if err := g.Check(); err != nil {
		return nil, 0, err
	}
	raw, err := g.MarshalGraph()
	if err != nil {
		return nil, 0, err
	}
	if comp, err = compressSnapshot(raw); err != nil {
		return nil, 0, err
	}
	return comp, next, nil
}

// putRepairedCollection writes collection ni with its items and snapshot
// comp (nil for none) into the repaired file. A collection whose name is
// already taken is dropped.
func putRepairedCollection(tx *bolt.Tx, ni *collInfo, items []repairItem, table []float32, comp []byte, next uint32, seq uint64, rep *RepairReport) error {
	if tx.Bucket(bktCollNames).Get(nameKey(ni.Tenant, ni.Database, ni.Name)) != nil {
		rep.DroppedBuckets++
		return nil
	}
	cb, err := tx.CreateBucket(collBucketName(ni.ID))
	if err != nil {
		return err
	}
	subs := map[string]*bolt.Bucket{}
	for _, sub := range [][]byte{subRec, subVec, subLog, subSnap} {
		b, err := cb.CreateBucket(sub)
		if err != nil {
			return err
		}
		b.FillPercent = 0.9
		subs[string(sub)] = b
	}
	for _, it := range items {
		if err := subs["rec"].Put([]byte(it.r.id), encodeRecord(it.r)); err != nil {
			return err
		}
		var val []byte
		if it.gv.row != nil {
			val = sealed(storedRow(it.gv.row))
		} else {
			var err error
			if val, _, err = encodeStored(ni, nil, nil, it.gv.v); err != nil {
				return err
			}
		}
		if err := subs["vec"].Put(u32(it.r.dense), val); err != nil {
			return err
		}
		rep.Records++
	}
	if table != nil {
		val, err := encodeCentroids(table, ni.Dimension)
		if err != nil {
			return err
		}
		if err := cb.Put(keyCentroids, val); err != nil {
			return err
		}
	}
	if comp != nil {
		chunks := 0
		for off := 0; off < len(comp); off += snapChunk {
			end := min(off+snapChunk, len(comp))
			if err := subs["snap"].Put(u32(uint32(chunks)), comp[off:end]); err != nil {
				return err
			}
			chunks++
		}
		ni.SnapSeq, ni.SnapNext, ni.SnapChunks, ni.SnapLen, ni.SnapCRC = seq, next, chunks, int64(len(comp)), crc(comp)
		ni.SnapGraph = true
	}
	if err := putCollInfo(tx, ni); err != nil {
		return err
	}
	rep.Collections++
	return tx.Bucket(bktCollNames).Put(nameKey(ni.Tenant, ni.Database, ni.Name), []byte(ni.ID))
}
