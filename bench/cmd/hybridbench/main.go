// Command hybridbench measures cairn's search: `quality` reports nDCG@10,
// recall@100 and MRR@10 of keyword, semantic and hybrid search on the dev
// sets for each available embedder; `speed` runs the 100,000-message speed
// suite and, with -gate, exits 1 when a gate fails (make bench-gate);
// `storage` measures message vectors on disk and in memory, float32 against
// SQ8; `storage-peers` the same vectors in cairn and in Chroma 1.0.0.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: hybridbench quality|calibrate|locomo|recall|hook|toolslist|locomo-study|locomo-misses|fusion|speed|oneshot-store|oneshot|encoder-gate|storage|storage-peers|storage-load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "quality":
		err = runQuality(ctx, os.Args[2:])
	case "calibrate":
		err = runCalibrate(ctx, os.Args[2:])
	case "fusion":
		err = runFusion(ctx, os.Args[2:])
	case "locomo-study":
		err = runLoCoMoStudy(ctx, os.Args[2:])
	case "locomo-misses":
		err = runLoCoMoMisses(ctx, os.Args[2:])
	case "locomo":
		err = runLoCoMo(ctx, os.Args[2:])
	case "recall":
		err = runRecall(ctx, os.Args[2:])
	case "hook":
		err = runHookBench(ctx, os.Args[2:])
	case "toolslist":
		err = runToolsList(ctx, os.Args[2:])
	case "speed":
		err = runSpeed(ctx, os.Args[2:])
	case "oneshot-store":
		err = runOneShotStore(ctx, os.Args[2:])
	case "oneshot":
		err = runOneShot(ctx, os.Args[2:])
	case "encoder-gate":
		err = runEncoderGate(ctx, os.Args[2:])
	case "storage":
		err = runStorage(ctx, os.Args[2:])
	case "storage-peers":
		err = runStoragePeers(ctx, os.Args[2:])
	case "storage-load":
		err = runStorageLoad(ctx, os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "unknown subcommand %q\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		if g, ok := err.(gateFailure); ok {
			fmt.Fprintln(os.Stderr, g.Error())
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "hybridbench:", err)
		os.Exit(1)
	}
}

var _ = flag.CommandLine
