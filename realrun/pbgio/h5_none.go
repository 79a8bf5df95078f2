//go:build !hdf5

package pbgio

import "errors"

// HDF5 reports whether this build reads and writes HDF5 (-tags hdf5).
const HDF5 = false

type h5Set struct {
	Path string
	Dims []int
	Data []float32
	Key  string
}

var errNoDataset = errors.New("no such dataset")

func writeH5(path, cfg string, groups []string, sets []h5Set) error { return ErrNoHDF5 }

func readH5(path, name string) ([]int, []float32, error) { return nil, nil, ErrNoHDF5 }
