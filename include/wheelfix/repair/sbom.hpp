// The SBOM repair writes when it grafts (PEP 770: <dist-info>/sboms/wheelfix.cdx.json),
// in the form vulnerability scanners read: they match components by package URL.
//
// Contract:
// - package_owners(files) asks the system's package manager which installed package
//   holds each file (as found, then as resolved: usrmerge spells /lib and /usr/lib
//   both ways, and dpkg knows one of them): dpkg-query (Debian, Ubuntu; one -S for
//   every path and one -W for the packages found, two processes however many files),
//   else rpm -qf (Fedora, RHEL, manylinux images), else apk (Alpine), each only where
//   its program exists; the namespace is os-release's ID. nullopt for a file none
//   answers for (built by hand, no package manager, a program that fails): the SBOM
//   then names the file by its hash. Only the package manager's own programs run
//   (util/process.hpp), with no shell; their output is bounded (1 MiB) and parsed
//   line by line, and one that runs past 30 s (a locked database) is killed and
//   answers for nothing.
// - PackageOwner::purl(): pkg:deb/debian/libffi8@3.4.4-1?arch=amd64,
//   pkg:rpm/fedora/zlib@1.2.13-3.fc39?arch=x86_64, pkg:apk/alpine/zlib@1.3.1-r0?arch=x86_64
//   (the purl spec's types; name and version percent-encoded as the spec asks).
// - sbom_json(name, version, grafts): CycloneDX 1.6 JSON: the wheel as
//   metadata.component (pkg:pypi/<name lower-cased, runs of -_. as '-'>@<version>);
//   each grafted file a "library" component (bom-ref: its member path in the wheel)
//   with the owner's name, version and purl, or its NEEDED name and
//   pkg:generic/<NEEDED name>?checksum=sha256:<hex>, the SHA-256 of the file as found, and
//   properties naming the source path, member and NEEDED name; `dependencies` from
//   the NEEDED graph (the wheel depends on what its members NEED, a graft on the
//   grafts it NEEDs). No timestamp and no serial number: the same graft gives the
//   same bytes.
#pragma once

#include "wheelfix/repair/graft.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

std::vector<std::optional<PackageOwner>> package_owners(const std::vector<std::filesystem::path>& files);

std::string sbom_json(const std::string& name, const std::string& version, const std::vector<GraftedFile>& grafts);

}  // namespace wheelfix::repair
