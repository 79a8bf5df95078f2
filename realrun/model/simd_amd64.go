//go:build !purego

package model

import "golang.org/x/sys/cpu"

// supportedLevels lists the SIMD levels this CPU runs: AVX2 needs AVX2 and
// FMA, AVX512 needs AVX-512F and DQ (x/sys/cpu also checks that the OS saves
// the wider registers).
func supportedLevels() []Level {
	var ls []Level
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ls = append(ls, AVX2)
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ {
			ls = append(ls, AVX512)
		}
	}
	return ls
}
