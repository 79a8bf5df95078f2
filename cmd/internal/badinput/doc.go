// Package badinput holds the end-to-end test that runs tierflow's real
// command binaries on the malformed inputs under testdata/bad/ and checks
// that each fails cleanly: exit status 2, one line on stderr, no output
// file or work directory left behind.
package badinput
