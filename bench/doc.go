// Package bench measures cairn against its aims and its peers; it holds the
// measuring code, and bench/cmd holds the commands that print the figures
// (hybridbench: search quality on the dev sets and the 100,000-message speed
// suite with its gates; indexbench: index/ beside hnswlib, faiss, coder/hnsw
// and an exact scan; killseries: concurrent writers under SIGKILL, checked
// for lost, duplicated and resurrected writes). README.md keeps every published figure with its date,
// machine, load and the command that reproduces it.
//
// Quality is measured only on the project's dev sets (Cranfield and CoSQA
// in BEIR layout, STS-B dev): LoadBEIR, LoadSTSBRetrieval, LoadCorpus and
// Metrics (nDCG@10, recall@100, MRR@10).
// Index and speed data are generated from a seed (MixtureSpec, EasySpec,
// HardSpec) and never committed; GroundTruth and Recall are the exact oracle
// the approximate index is scored against. LexicalEmbedder and NoiseEmbedder
// are deterministic embedders for runs without a model.
//
// Nothing imports bench. It may import engine, vecstore, index, fts and
// embed; it is not safe for concurrent use beyond what each function says.
package bench
