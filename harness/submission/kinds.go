package submission

import (
	"bytes"
	"debug/elf"
	"path"
	"regexp"
)

// Kind says what an executable candidate is.
type Kind string

// Classify says what kind of executable data is, or "" for none. It reads
// the magic bytes only: every ELF file is ELF (see ClassifyFile).
func Classify(data []byte) Kind {
	switch {
	case bytes.HasPrefix(data, []byte("\x7fELF")):
		return ELF
	case hasShebang(data):
		return Script
	case bytes.HasPrefix(data, []byte("MZ")):
		return PE
	case len(data) >= 4 && (bytes.Equal(data[:4], []byte{0xfe, 0xed, 0xfa, 0xce}) || bytes.Equal(data[:4], []byte{0xfe, 0xed, 0xfa, 0xcf}) ||
		bytes.Equal(data[:4], []byte{0xce, 0xfa, 0xed, 0xfe}) || bytes.Equal(data[:4], []byte{0xcf, 0xfa, 0xed, 0xfe}) ||
		bytes.Equal(data[:4], []byte{0xca, 0xfe, 0xba, 0xbe})):
		return MachO
	}
	return ""
}

// ClassifyFile is Classify that also tells an ELF program from an ELF file
// that is not one, by its headers and its name:
//
//   - a relocatable object (ET_REL, a .o file) or a core dump (ET_CORE) is
//     ObjectFile;
//   - an ET_DYN file is a position-independent executable (ELF) when its
//     DT_FLAGS_1 has DF_1_PIE (what current linkers mark PIE and static-pie
//     executables with); otherwise it is SharedLibrary when its name ends in
//     .so or .so.N (libfoo.so.1, _mod.cpython-312-x86_64-linux-gnu.so), when
//     it has a DT_SONAME, or when it has neither a PT_INTERP (a loader) nor an
//     entry point; what is left (a loader, or an entry point and no SONAME: a
//     PIE or static-pie from an older linker) is ELF;
//   - any other ELF file, one whose headers cannot be read included, is ELF
//     (validate's format check says what is wrong with it).
func ClassifyFile(name string, data []byte) Kind {
	k := Classify(data)
	if k != ELF {
		return k
	}
	return elfKind(name, data)
}

// soName matches the names of shared libraries.
var soName = regexp.MustCompile(`\.so(\.[0-9]+)*$`)

func elfKind(name string, data []byte) (k Kind) {
	defer func() {
		if recover() != nil { // a hostile header; the format check will say so
			k = ELF
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return ELF
	}
	defer f.Close()
	switch f.Type {
	case elf.ET_REL, elf.ET_CORE:
		return ObjectFile
	case elf.ET_DYN:
	default:
		return ELF
	}
	interp := false
	var flags1 uint64
	soname := false
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			interp = true
		case elf.PT_DYNAMIC:
			tags := dynTags(f, p)
			flags1 |= tags[elf.DT_FLAGS_1]
			_, soname = tags[elf.DT_SONAME]
		}
	}
	switch {
	case flags1&uint64(elf.DF_1_PIE) != 0:
		return ELF
	case soName.MatchString(path.Base(name)), soname, !interp && f.Entry == 0:
		return SharedLibrary
	}
	return ELF
}

// dynTags reads the tags of a PT_DYNAMIC segment (no section headers are
// needed), with the value of each.
func dynTags(f *elf.File, p *elf.Prog) map[elf.DynTag]uint64 {
	tags := map[elf.DynTag]uint64{}
	size := uint64(16)
	if f.Class == elf.ELFCLASS32 {
		size = 8
	}
	const maxTags = 4096
	buf := make([]byte, size)
	for off := uint64(0); off+size <= p.Filesz && off/size < maxTags; off += size {
		if _, err := p.ReadAt(buf, int64(off)); err != nil {
			break
		}
		var tag, val uint64
		if size == 16 {
			tag, val = f.ByteOrder.Uint64(buf), f.ByteOrder.Uint64(buf[8:])
		} else {
			tag, val = uint64(f.ByteOrder.Uint32(buf)), uint64(f.ByteOrder.Uint32(buf[4:]))
		}
		if elf.DynTag(tag) == elf.DT_NULL {
			break
		}
		tags[elf.DynTag(tag)] = val
	}
	return tags
}

// describe names a kind for a sentence.
func describe(k Kind) string {
	switch k {
	case "":
		return "neither an ELF executable nor a script starting with #!"
	case SharedLibrary:
		return "a shared library"
	case ObjectFile:
		return "an ELF object file, not an executable"
	}
	return "a " + string(k)
}
