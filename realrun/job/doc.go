// Package job is one `realrun` invocation as a library: Options in the
// command's names and numbers, Configure (the one place they are checked
// and turned into a data spec, hyper-parameters and Plans), and Train
// (lock and prepare the work directory, resume or start, run the epochs
// through the engine seam, evaluate, keep the best epoch and stop early
// (Selection), export), and ResolveCheckpoint, which reads a trained work
// directory at its last or its best checkpoint.
package job
