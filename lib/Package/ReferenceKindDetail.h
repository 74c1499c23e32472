//===- ReferenceKindDetail.h - What each reference kind defines -*- C++ -*-===//
//
// Private to lib/Package. Each kind of ReferenceKinds.def has one file here,
// <Kind>Reference.cpp, that holds all the package knows of it:
//   - write<Kind>Reference / read<Kind>Reference: its fields in its member
//     of ReferenceOp's union (Package.capnp);
//   - check<Kind>Reference: what validatePackage requires of it, and the
//     signature (shape, flops, operands) of the value it computes.
// Its evaluation and tolerance are evaluate<Kind> in lib/Reference. The
// tables in PackageIO.cpp and Validate.cpp are built from the .def rows, so
// a kind without one of these functions does not compile.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_PACKAGE_REFERENCEKINDDETAIL_H
#define IPU_PACKAGE_REFERENCEKINDDETAIL_H

#include "IPU/Package/Package.h"

#include "Package.capnp.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ipu::package_detail {

/// A reader-side failure that is not a Cap'n Proto one (bad magic, unknown
/// enum value, inconsistent tables); PackageIO turns it into the error.
struct FormatError {
  std::string message;
};

template <typename T, typename ListBuilder>
void fill(ListBuilder list, const std::vector<T> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    list.set(i, values[i]);
}

template <typename T, typename ListReader>
std::vector<T> toVector(ListReader list) {
  std::vector<T> values(list.size());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = list[i];
  return values;
}

/// a * b on package fields: false when the exact result does not fit in
/// 64 bits, so that a wrapped value never passes a bound.
inline bool multiply(uint64_t a, uint64_t b, uint64_t &result) {
  return !__builtin_mul_overflow(a, b, &result);
}

/// "2x3x4".
std::string shapeString(const std::vector<int64_t> &shape);

/// What a kind's check gives of the value it computes: its shape and the
/// flops computing it takes, and for a result that does not match its
/// stream, the operands and what the value is of them.
struct ReferenceSignature {
  std::vector<int64_t> shape;
  uint64_t flops = 0;
  std::string operands, form, resultForm;
};

/// What a kind's check may ask of the package being validated.
class ReferenceChecking {
public:
  virtual ~ReferenceChecking() = default;
  virtual const Package &package() const = 0;
  /// The shape of operand `a` of reference op `i` (an input stream or an
  /// earlier op's value), and its name for messages.
  virtual std::optional<std::string> operand(size_t i, unsigned a,
                                             const std::string &where,
                                             std::vector<int64_t> &shape,
                                             std::string &name) const = 0;
};

#define IPU_REFERENCE_KIND(Kind, name, arity)                                  \
  void write##Kind##Reference(const ReferenceOp &op,                           \
                              wire::ReferenceOp::Builder out);                 \
  void read##Kind##Reference(wire::ReferenceOp::Reader in, size_t i,           \
                             ReferenceOp &op);                                 \
  std::optional<std::string> check##Kind##Reference(                           \
      const ReferenceChecking &checking, size_t i, const std::string &where,   \
      ReferenceSignature &signature);
#include "IPU/Package/ReferenceKinds.def"

} // namespace ipu::package_detail

#endif // IPU_PACKAGE_REFERENCEKINDDETAIL_H
