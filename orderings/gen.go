package orderings

// The stored tables (tables.go) are written by internal/gentables, which
// runs the offline searches of internal/search where tierflow's other
// candidates (TierflowCandidates without the table's own) miss
// PrefetchTarget. Each line below is one table, generated on top of the
// ones above it; `go generate -run 'table
// strip' ./orderings` runs one (one core: strip about 20 s, cyclic about
// 7 min, split about 20 min for c = 4 … 6). Strip and cyclic are searched
// again from scratch, so their tables now differ from the stored ones,
// found before later candidates existed; split keeps its entries and only
// adds. `go run ./internal/gentables -h` lists the split search's options.
//
//go:generate go run ./internal/gentables -table strip
//go:generate go run ./internal/gentables -table cyclic
//go:generate go run ./internal/gentables -table split
