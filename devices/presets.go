package devices

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// PresetNames lists the built-in profiles, sorted.
func PresetNames() []string {
	files, _ := fs.Glob(presetFS, "presets/*.yaml") // the pattern is valid
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(path.Base(f), ".yaml")
	}
	slices.Sort(names)
	return names
}

// Preset returns the built-in profile with the given name.
func Preset(name string) (Profile, error) {
	if !slices.Contains(PresetNames(), name) {
		return Profile{}, fmt.Errorf("unknown preset %q (want one of: %s)", name, strings.Join(PresetNames(), ", "))
	}
	file := "presets/" + name + ".yaml"
	data, err := presetFS.ReadFile(file)
	if err != nil {
		return Profile{}, fmt.Errorf("preset %q: %w", name, err)
	}
	return Parse(data, file)
}

// Resolve returns the preset called nameOrPath or, when there is none, the
// profile in the file at that path. A preset name wins over a file of the
// same name; write "./name" for the file.
func Resolve(nameOrPath string) (Profile, error) {
	if slices.Contains(PresetNames(), nameOrPath) {
		return Preset(nameOrPath)
	}
	if _, err := os.Stat(nameOrPath); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return Load(nameOrPath)
	}
	return Profile{}, fmt.Errorf("unknown device %q (want a preset: %s, or a YAML file)", nameOrPath, strings.Join(PresetNames(), ", "))
}
