// Package workdir builds and recognises the real engine's work
// directories: it generates a preset graph or parses edge files into a
// store (built under a temporary name, renamed when complete), reuses a
// directory built from the same data and layout, and holds the lock that
// keeps one run per directory.
package workdir
