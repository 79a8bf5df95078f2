//go:build hdf5

package pbgio

import (
	"errors"
	"fmt"
	"strings"

	"gonum.org/v1/hdf5"
)

// HDF5 reports whether this build reads and writes HDF5 (-tags hdf5).
const HDF5 = true

// h5Set is one float32 dataset to write: its path from the root, its
// shape, its values (row-major) and, if not empty, the state_dict_key
// attribute PBG attaches to model parameters.
type h5Set struct {
	Path string
	Dims []int
	Data []float32
	Key  string
}

// writeH5 writes a new HDF5 file at path with PBG's root attributes
// (format_version, and config/json when cfg is not empty), the groups
// (parents first) and the datasets, whose parent groups are made as
// needed.
func writeH5(path, cfg string, groups []string, sets []h5Set) (err error) {
	f, err := hdf5.CreateFile(path, hdf5.F_ACC_TRUNC)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %w", path, cerr)
		}
	}()
	root, err := f.OpenGroup("/")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer root.Close()
	v := int64(FormatVersion)
	if err := writeAttr(root.CreateAttribute, formatVersionKey, hdf5.T_NATIVE_INT64, &v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if cfg != "" {
		if err := writeAttr(root.CreateAttribute, configAttr, hdf5.T_GO_STRING, &cfg); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	made := map[string]bool{}
	mkdir := func(g string) error {
		parts := strings.Split(g, "/")
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			if made[p] {
				continue
			}
			grp, err := f.CreateGroup(p)
			if err != nil {
				return fmt.Errorf("group %s: %w", p, err)
			}
			grp.Close()
			made[p] = true
		}
		return nil
	}
	for _, g := range groups {
		if err := mkdir(g); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, s := range sets {
		if i := strings.LastIndexByte(s.Path, '/'); i > 0 {
			if err := mkdir(s.Path[:i]); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if err := writeSet(f, s); err != nil {
			return fmt.Errorf("%s: dataset %s: %w", path, s.Path, err)
		}
	}
	return nil
}

func writeSet(f *hdf5.File, s h5Set) error {
	dims := make([]uint, len(s.Dims))
	n := 1
	for i, d := range s.Dims {
		dims[i], n = uint(d), n*d
	}
	if len(s.Data) != n {
		return fmt.Errorf("%d values for shape %v", len(s.Data), s.Dims)
	}
	space, err := hdf5.CreateSimpleDataspace(dims, nil)
	if err != nil {
		return err
	}
	defer space.Close()
	ds, err := f.CreateDataset(s.Path, hdf5.T_NATIVE_FLOAT, space)
	if err != nil {
		return err
	}
	defer ds.Close()
	if n > 0 {
		if err := ds.Write(&s.Data[0]); err != nil {
			return err
		}
	}
	if s.Key != "" {
		return writeAttr(ds.CreateAttribute, stateDictKeyAttr, hdf5.T_GO_STRING, &s.Key)
	}
	return nil
}

// writeAttr writes one scalar attribute through create (a group's or a
// dataset's CreateAttribute).
func writeAttr(create func(string, *hdf5.Datatype, *hdf5.Dataspace) (*hdf5.Attribute, error), name string, t *hdf5.Datatype, v any) error {
	space, err := hdf5.CreateDataspace(hdf5.S_SCALAR)
	if err != nil {
		return err
	}
	defer space.Close()
	a, err := create(name, t, space)
	if err != nil {
		return fmt.Errorf("attribute %s: %w", name, err)
	}
	defer a.Close()
	if err := a.Write(v, t); err != nil {
		return fmt.Errorf("attribute %s: %w", name, err)
	}
	return nil
}

// errNoDataset is returned by readH5 for a dataset the file lacks.
var errNoDataset = errors.New("no such dataset")

// readH5 opens an HDF5 file as PBG's loader does, refusing a
// format_version other than FormatVersion, and reads the float32 dataset
// at name (its shape and values); a missing dataset is errNoDataset.
func readH5(path, name string) (dims []int, data []float32, err error) {
	f, err := hdf5.OpenFile(path, hdf5.F_ACC_RDONLY)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not an HDF5 file PBG wrote (%w)", path, err)
	}
	defer f.Close()
	root, err := f.OpenGroup("/")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer root.Close()
	a, err := root.OpenAttribute(formatVersionKey)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: no %s attribute: not a PBG checkpoint file", path, formatVersionKey)
	}
	var v int64
	err = a.Read(&v, hdf5.T_NATIVE_INT64)
	a.Close()
	if err != nil || v != FormatVersion {
		return nil, nil, fmt.Errorf("%s: %s %d, this build reads version %d", path, formatVersionKey, v, FormatVersion)
	}
	parts := strings.Split(name, "/")
	for i := range parts {
		if !f.LinkExists(strings.Join(parts[:i+1], "/")) {
			return nil, nil, fmt.Errorf("%s: %s: %w", path, name, errNoDataset)
		}
	}
	ds, err := f.OpenDataset(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", path, name, err)
	}
	defer ds.Close()
	t, err := ds.Datatype()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", path, name, err)
	}
	class, size := t.Class(), t.Size()
	t.Close()
	if class != hdf5.T_FLOAT || size != 4 {
		return nil, nil, fmt.Errorf("%s: %s is not float32", path, name)
	}
	space := ds.Space()
	d, _, err := space.SimpleExtentDims()
	space.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", path, name, err)
	}
	n := 1
	for _, x := range d {
		dims = append(dims, int(x))
		n *= int(x)
	}
	data = make([]float32, n)
	if n > 0 {
		if err := ds.Read(&data[0]); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", path, name, err)
		}
	}
	return dims, data, nil
}
