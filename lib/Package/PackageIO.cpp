//===- PackageIO.cpp - Package <-> Cap'n Proto bytes and files -----------===//
//
// Cap'n Proto reports malformed input by throwing kj::Exception. This file is
// built with exceptions on; every exception stops at deserializePackage and
// becomes a "corrupt package: ..." message, because callers are built without
// exceptions.
//
//===----------------------------------------------------------------------===//

#include "IPU/Package/Package.h"
#include "IPU/Support/FileIO.h"

#include "ReferenceKindDetail.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include <sys/stat.h>

using namespace ipu;

namespace {

using package_detail::FormatError;
using package_detail::fill;
using package_detail::toVector;

kj::StringPtr toText(const std::string &string) {
  return kj::StringPtr(string.c_str(), string.size());
}

std::string fromText(capnp::Text::Reader text) {
  return std::string(text.cStr(), text.size());
}


//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

void writeStream(const HostStream &stream, wire::HostStream::Builder out) {
  out.setName(toText(stream.name));
  out.setToDevice(stream.toDevice);
  out.setWeight(stream.weight);
  out.setIndex(stream.index);
  out.setType(static_cast<wire::ElementType>(stream.type));
  fill(out.initShape(stream.shape.size()), stream.shape);
  if (!stream.declaredShape.empty())
    fill(out.initDeclaredShape(stream.declaredShape.size()), stream.declaredShape);
  if (!stream.layerStreams.empty())
    fill(out.initLayerStreams(stream.layerStreams.size()), stream.layerStreams);
  out.setBatchDim(stream.batchDim);

  size_t count = stream.pieces.size();
  wire::StreamPieces::Builder pieces = out.initPieces();
  auto tile = pieces.initTile(count);
  auto address = pieces.initAddress(count);
  auto hostOffset = pieces.initHostOffset(count);
  auto rows = pieces.initRows(count);
  auto rowBytes = pieces.initRowBytes(count);
  auto tilePitch = pieces.initTilePitch(count);
  auto hostPitch = pieces.initHostPitch(count);
  for (size_t i = 0; i < count; ++i) {
    const StreamPiece &piece = stream.pieces[i];
    tile.set(i, piece.tile);
    address.set(i, piece.address);
    hostOffset.set(i, piece.hostOffset);
    rows.set(i, piece.rows);
    rowBytes.set(i, piece.rowBytes);
    tilePitch.set(i, piece.tilePitch);
    hostPitch.set(i, piece.hostPitch);
  }
  // The strides list is written only when some piece is strided.
  bool strided = false;
  for (const StreamPiece &piece : stream.pieces)
    strided |= piece.hostElementStride != 0;
  if (strided) {
    auto stride = pieces.initHostElementStride(count);
    for (size_t i = 0; i < count; ++i)
      stride.set(i, stream.pieces[i].hostElementStride);
  }
}

void writeComputeSet(const ComputeSet &computeSet,
                     wire::ComputeSet::Builder out) {
  out.setName(toText(computeSet.name));
  out.setKernel(toText(computeSet.kernel));
  fill(out.initTiles(computeSet.tiles.size()), computeSet.tiles);
  fill(out.initOperandAddress(computeSet.operandAddress.size()),
       computeSet.operandAddress);
  fill(out.initParams(computeSet.params.size()), computeSet.params);
  out.setLocation(toText(computeSet.location));
  // Last, as its field number is, and only when some operand advances.
  if (!computeSet.operandAdvance.empty())
    fill(out.initOperandAdvance(computeSet.operandAdvance.size()),
         computeSet.operandAdvance);
}

/// Each kind's fields, written into and read from its member of the
/// ReferenceOp union (Package.capnp) by its <Kind>Reference.cpp, in
/// ReferenceKinds.def's order.
constexpr void (*kReferenceWriters[])(const ReferenceOp &, wire::ReferenceOp::Builder) = {
#define IPU_REFERENCE_KIND(Kind, name, arity) package_detail::write##Kind##Reference,
#include "IPU/Package/ReferenceKinds.def"
};
constexpr void (*kReferenceReaders[])(wire::ReferenceOp::Reader, size_t, ReferenceOp &) = {
#define IPU_REFERENCE_KIND(Kind, name, arity) package_detail::read##Kind##Reference,
#include "IPU/Package/ReferenceKinds.def"
};
// The union's members are the kinds, in order.
static_assert(unsigned(wire::ReferenceOp::MATMUL) == unsigned(ReferenceKind::Matmul) &&
                  unsigned(wire::ReferenceOp::ELEMENTWISE) ==
                      unsigned(ReferenceKind::Elementwise) &&
                  unsigned(wire::ReferenceOp::PERMUTE) == unsigned(ReferenceKind::Permute) &&
                  unsigned(wire::ReferenceOp::STREAMED) == unsigned(ReferenceKind::Streamed),
              "Package.capnp's ReferenceOp union must list the kinds in "
              "ReferenceKinds.def's order");

void writePhase(const PackagePhase &phase, wire::Phase::Builder out) {
  out.setName(toText(phase.name));
  const ExchangePhase &transfers = phase.phase;
  out.setTiles(transfers.tiles);
  fill(out.initSource(transfers.source.size()), transfers.source);
  fill(out.initWords(transfers.words.size()), transfers.words);
  fill(out.initDestBegin(transfers.destBegin.size()), transfers.destBegin);
  fill(out.initDestTiles(transfers.destTiles.size()), transfers.destTiles);
  fill(out.initSourceAddress(phase.sourceAddress.size()), phase.sourceAddress);
  fill(out.initDestAddress(phase.destAddress.size()), phase.destAddress);

  const std::vector<ExchangeRun> &runs = phase.schedule.runs;
  out.setStrategy(toText(phase.schedule.strategy));
  auto transfer = out.initRunTransfer(runs.size());
  auto wordOffset = out.initRunWordOffset(runs.size());
  auto words = out.initRunWords(runs.size());
  auto start = out.initRunStart(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    transfer.set(i, runs[i].transfer);
    wordOffset.set(i, runs[i].wordOffset);
    words.set(i, runs[i].words);
    start.set(i, runs[i].start);
  }
  // In field-number order: `capnp encode` of the decoded text then lays the
  // message out byte for byte the same.
  out.setLocation(toText(phase.location));
  bool anyPaired = false;
  for (const ExchangeRun &run : runs)
    anyPaired |= run.paired;
  if (anyPaired) {
    auto paired = out.initRunPaired(runs.size());
    for (size_t i = 0; i < runs.size(); ++i)
      paired.set(i, runs[i].paired);
  }
}

void writeKernels(const Package &package, wire::Package::Builder out);

void writePackage(const Package &package, wire::Package::Builder out) {
  out.setMagic(wire::PACKAGE_MAGIC);
  out.setFormatVersion(package.formatVersion);
  out.setCompiler(toText(package.compiler));
  out.setTarget(toText(package.target));
  out.setTiles(package.tiles);
  out.setWorkload(toText(package.workload));
  out.setFlops(package.flops);
  out.setImages(package.images);

  auto streams = out.initStreams(package.streams.size());
  for (size_t i = 0; i < package.streams.size(); ++i)
    writeStream(package.streams[i], streams[i]);
  auto computeSets = out.initComputeSets(package.computeSets.size());
  for (size_t i = 0; i < package.computeSets.size(); ++i)
    writeComputeSet(package.computeSets[i], computeSets[i]);
  auto phases = out.initPhases(package.phases.size());
  for (size_t i = 0; i < package.phases.size(); ++i)
    writePhase(package.phases[i], phases[i]);

  auto program = out.initProgram(package.program.size());
  for (size_t i = 0; i < package.program.size(); ++i) {
    program[i].setKind(static_cast<wire::StepKind>(package.program[i].kind));
    program[i].setIndex(package.program[i].index);
  }
  auto reference = out.initReference(package.reference.size());
  for (size_t i = 0; i < package.reference.size(); ++i) {
    const ReferenceOp &op = package.reference[i];
    fill(reference[i].initArguments(op.arguments.size()), op.arguments);
    reference[i].setResult(op.result);
    reference[i].setType(static_cast<uint8_t>(op.type));
    // A kind that is none (an in-memory package under test) leaves the
    // union at its first member's defaults.
    if (unsigned(op.kind) < kReferenceKinds)
      kReferenceWriters[unsigned(op.kind)](op, reference[i]);
  }
  auto metadata = out.initMetadata(package.metadata.size());
  for (size_t i = 0; i < package.metadata.size(); ++i) {
    metadata[i].setKey(toText(package.metadata[i].first));
    metadata[i].setValue(toText(package.metadata[i].second));
  }
  // Written only when there are kernels, so that a package without them
  // reads back and re-encodes byte for byte as before they existed.
  if (!package.kernels.empty())
    writeKernels(package, out);
  // Last, as its field number is: `capnp encode` of the decoded text then
  // lays the message out byte for byte the same.
  if (!package.buffers.empty()) {
    auto buffers = out.initBuffers(package.buffers.size());
    for (size_t i = 0; i < package.buffers.size(); ++i) {
      const PackageBuffer &buffer = package.buffers[i];
      buffers[i].setName(toText(buffer.name));
      buffers[i].setMemoryClass(static_cast<uint8_t>(buffer.memoryClass));
      buffers[i].setAddress(buffer.address);
      buffers[i].setBytes(buffer.bytes);
      fill(buffers[i].initTiles(buffer.tiles.size()), buffer.tiles);
      buffers[i].setFirstStep(buffer.firstStep);
      buffers[i].setLastStep(buffer.lastStep);
      buffers[i].setLocation(toText(buffer.location));
    }
  }
  // After the buffers, as its field number is.
  out.setResults(package.results);
  if (!package.constants.empty()) {
    auto constants = out.initConstants(package.constants.size());
    for (size_t i = 0; i < package.constants.size(); ++i) {
      constants[i].setArgument(package.constants[i].argument);
      const std::vector<uint8_t> &bytes = package.constants[i].bytes;
      constants[i].setData(kj::arrayPtr(bytes.data(), bytes.size()));
    }
  }
  if (!package.loops.empty()) {
    auto loops = out.initLoops(package.loops.size());
    for (size_t i = 0; i < package.loops.size(); ++i) {
      const PackageLoop &loop = package.loops[i];
      loops[i].setName(toText(loop.name));
      loops[i].setCount(loop.count);
      loops[i].setSteps(loop.steps);
      loops[i].setLocation(toText(loop.location));
    }
  }
}

void writeKernels(const Package &package, wire::Package::Builder out) {
  auto kernels = out.initKernels(package.kernels.size());
  for (size_t i = 0; i < package.kernels.size(); ++i) {
    const ElementwiseKernel &kernel = *package.kernels[i];
    const ElementwiseBody &body = kernel.body();
    auto entry = kernels[i];
    entry.setName(toText(kernel.name()));
    entry.setSymbol(toText(kernel.symbol()));
    auto types = entry.initInputTypes(body.inputs.size());
    auto broadcasts = entry.initInputBroadcasts(body.inputs.size());
    for (size_t k = 0; k < body.inputs.size(); ++k) {
      types.set(k, static_cast<uint8_t>(body.inputs[k].type));
      broadcasts.set(k, static_cast<uint8_t>(body.inputs[k].broadcast));
    }
    entry.setResultType(static_cast<uint8_t>(body.resultType));
    entry.setResult(body.result);
    entry.setReduction(static_cast<uint8_t>(body.reduction));
    entry.setInit(body.init);
    const size_t ops = body.ops.size();
    auto kinds = entry.initOpKinds(ops);
    auto opTypes = entry.initOpTypes(ops);
    auto predicates = entry.initOpPredicates(ops);
    auto operands = entry.initOpOperands(3 * ops);
    auto constants = entry.initOpConstants(ops);
    for (size_t k = 0; k < ops; ++k) {
      const BodyOp &op = body.ops[k];
      kinds.set(k, static_cast<uint8_t>(op.kind));
      opTypes.set(k, static_cast<uint8_t>(op.type));
      predicates.set(k, op.predicate);
      for (unsigned o = 0; o < 3; ++o)
        operands.set(3 * k + o, op.operands[o]);
      constants.set(k, op.constant);
    }
  }
  out.setKernelAbiVersion(package.kernelAbiVersion);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//
//
// Every pointer field is read exactly once: the traversal limit is sized to
// the input on that assumption (see deserializePackage).

void readStream(wire::HostStream::Reader in, HostStream &stream) {
  stream.name = fromText(in.getName());
  stream.toDevice = in.getToDevice();
  stream.weight = in.getWeight();
  stream.index = in.getIndex();
  uint16_t type = static_cast<uint16_t>(in.getType());
  if (type > static_cast<uint16_t>(ElementType::F8E5M2))
    throw FormatError{"stream '" + stream.name + "': unknown element type " +
                      std::to_string(type)};
  stream.type = static_cast<ElementType>(type);
  stream.shape = toVector<int64_t>(in.getShape());
  stream.declaredShape = toVector<int64_t>(in.getDeclaredShape());
  stream.layerStreams = toVector<uint32_t>(in.getLayerStreams());
  stream.batchDim = in.getBatchDim();

  wire::StreamPieces::Reader pieces = in.getPieces();
  auto tile = pieces.getTile();
  auto address = pieces.getAddress();
  auto hostOffset = pieces.getHostOffset();
  auto rows = pieces.getRows();
  auto rowBytes = pieces.getRowBytes();
  auto tilePitch = pieces.getTilePitch();
  auto hostPitch = pieces.getHostPitch();
  auto stride = pieces.getHostElementStride();
  size_t count = tile.size();
  if (address.size() != count || hostOffset.size() != count ||
      rows.size() != count || rowBytes.size() != count ||
      tilePitch.size() != count || hostPitch.size() != count ||
      (stride.size() != 0 && stride.size() != count))
    throw FormatError{"stream '" + stream.name +
                      "': piece tables have different lengths"};
  stream.pieces.resize(count);
  for (size_t i = 0; i < count; ++i) {
    StreamPiece &piece = stream.pieces[i];
    piece.tile = tile[i];
    piece.address = address[i];
    piece.hostOffset = hostOffset[i];
    piece.rows = rows[i];
    piece.rowBytes = rowBytes[i];
    piece.tilePitch = tilePitch[i];
    piece.hostPitch = hostPitch[i];
    piece.hostElementStride = stride.size() ? stride[i] : 0;
  }
}

void readComputeSet(wire::ComputeSet::Reader in, ComputeSet &computeSet) {
  computeSet.name = fromText(in.getName());
  computeSet.kernel = fromText(in.getKernel());
  computeSet.tiles = toVector<uint32_t>(in.getTiles());
  computeSet.operandAddress = toVector<uint32_t>(in.getOperandAddress());
  computeSet.params = toVector<int64_t>(in.getParams());
  computeSet.location = fromText(in.getLocation());
  computeSet.operandAdvance = toVector<uint32_t>(in.getOperandAdvance());
}

void readPhase(wire::Phase::Reader in, PackagePhase &phase) {
  phase.name = fromText(in.getName());
  phase.location = fromText(in.getLocation());
  ExchangePhase &transfers = phase.phase;
  transfers.tiles = in.getTiles();
  transfers.source = toVector<uint32_t>(in.getSource());
  transfers.words = toVector<uint32_t>(in.getWords());
  transfers.destBegin = toVector<uint32_t>(in.getDestBegin());
  transfers.destTiles = toVector<uint32_t>(in.getDestTiles());
  phase.sourceAddress = toVector<uint32_t>(in.getSourceAddress());
  phase.destAddress = toVector<uint32_t>(in.getDestAddress());

  phase.schedule.strategy = fromText(in.getStrategy());
  auto transfer = in.getRunTransfer();
  auto wordOffset = in.getRunWordOffset();
  auto words = in.getRunWords();
  auto start = in.getRunStart();
  auto paired = in.getRunPaired();
  size_t count = transfer.size();
  if (wordOffset.size() != count || words.size() != count ||
      start.size() != count || (paired.size() != 0 && paired.size() != count))
    throw FormatError{"phase '" + phase.name +
                      "': schedule run tables have different lengths"};
  phase.schedule.runs.resize(count);
  for (size_t i = 0; i < count; ++i)
    phase.schedule.runs[i] = {transfer[i], wordOffset[i], words[i], start[i],
                              paired.size() != 0 && paired[i]};
}

void readPackage(wire::Package::Reader in, Package &package) {
  if (in.getMagic() != wire::PACKAGE_MAGIC)
    throw FormatError{"not an IPU package (bad magic number)"};
  package.formatVersion = in.getFormatVersion();
  if (package.formatVersion >= 1 && package.formatVersion < 4)
    throw FormatError{"format version " + std::to_string(package.formatVersion) +
                      " predates timed exchange schedules (version 4): its "
                      "phases cannot be checked against the hardware's rules; "
                      "compile the model again"};
  if (package.formatVersion == 4)
    throw FormatError{"format version 4 predates typed reference ops (version 5): "
                      "compile the model again"};
  if (package.formatVersion < Package::kOldestFormatVersion ||
      package.formatVersion > Package::kFormatVersion)
    throw FormatError{"unsupported format version " +
                      std::to_string(package.formatVersion) +
                      " (this build reads versions " +
                      std::to_string(Package::kOldestFormatVersion) + " to " +
                      std::to_string(Package::kFormatVersion) + ")"};
  package.compiler = fromText(in.getCompiler());
  package.target = fromText(in.getTarget());
  package.tiles = in.getTiles();
  package.workload = fromText(in.getWorkload());
  package.flops = in.getFlops();
  package.images = package.formatVersion >= 8 ? in.getImages() : 1;

  auto streams = in.getStreams();
  package.streams.resize(streams.size());
  for (size_t i = 0; i < streams.size(); ++i)
    readStream(streams[i], package.streams[i]);
  auto computeSets = in.getComputeSets();
  package.computeSets.resize(computeSets.size());
  for (size_t i = 0; i < computeSets.size(); ++i)
    readComputeSet(computeSets[i], package.computeSets[i]);
  auto phases = in.getPhases();
  package.phases.resize(phases.size());
  for (size_t i = 0; i < phases.size(); ++i)
    readPhase(phases[i], package.phases[i]);

  auto program = in.getProgram();
  package.program.resize(program.size());
  for (size_t i = 0; i < program.size(); ++i) {
    uint16_t kind = static_cast<uint16_t>(program[i].getKind());
    if (kind > static_cast<uint16_t>(StepKind::Loop))
      throw FormatError{"program step " + std::to_string(i) +
                        ": unknown step kind " + std::to_string(kind)};
    package.program[i].kind = static_cast<StepKind>(kind);
    package.program[i].index = program[i].getIndex();
  }
  auto reference = in.getReference();
  package.reference.resize(reference.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    package.reference[i].arguments =
        toVector<uint32_t>(reference[i].getArguments());
    package.reference[i].result = reference[i].getResult();
    uint8_t type = reference[i].getType();
    if (type > static_cast<uint8_t>(ElementType::F8E5M2))
      throw FormatError{"reference op " + std::to_string(i) +
                        ": unknown element type " + std::to_string(type)};
    package.reference[i].type = static_cast<ElementType>(type);
    ReferenceOp &op = package.reference[i];
    // As a number: a newer writer may use a member this reader does not
    // know. Members are in ReferenceKinds.def's order.
    const unsigned member = static_cast<unsigned>(reference[i].which());
    if (member >= kReferenceKinds)
      throw FormatError{"reference op " + std::to_string(i) + ": unknown kind " +
                        std::to_string(member)};
    op.kind = ReferenceKind(member);
    kReferenceReaders[member](reference[i], i, op);
  }
  auto kernels = in.getKernels();
  package.kernels.clear();
  for (size_t i = 0; i < kernels.size(); ++i) {
    auto entry = kernels[i];
    std::string what = "kernel " + std::to_string(i);
    ElementwiseBody body;
    auto types = entry.getInputTypes();
    auto broadcasts = entry.getInputBroadcasts();
    if (types.size() != broadcasts.size())
      throw FormatError{what + ": " + std::to_string(types.size()) +
                        " input types but " + std::to_string(broadcasts.size()) +
                        " broadcasts"};
    auto elementType = [&](uint8_t value, const char *field) {
      if (value > static_cast<uint8_t>(ElementType::F8E5M2))
        throw FormatError{what + ": " + field + " holds unknown element type " +
                          std::to_string(value)};
      return static_cast<ElementType>(value);
    };
    for (size_t k = 0; k < types.size(); ++k) {
      if (broadcasts[k] >= kBroadcasts)
        throw FormatError{what + ": inputBroadcasts holds unknown broadcast " +
                          std::to_string(broadcasts[k])};
      body.inputs.push_back({elementType(types[k], "inputTypes"),
                             static_cast<Broadcast>(broadcasts[k])});
    }
    body.resultType = elementType(entry.getResultType(), "resultType");
    body.result = entry.getResult();
    if (entry.getReduction() >= kRowReductions)
      throw FormatError{what + ": reduction holds unknown row reduction " +
                        std::to_string(entry.getReduction())};
    body.reduction = static_cast<RowReduction>(entry.getReduction());
    body.init = entry.getInit();
    auto kinds = entry.getOpKinds();
    auto opTypes = entry.getOpTypes();
    auto predicates = entry.getOpPredicates();
    auto operands = entry.getOpOperands();
    auto constants = entry.getOpConstants();
    const size_t ops = kinds.size();
    if (opTypes.size() != ops || predicates.size() != ops ||
        constants.size() != ops || operands.size() != 3 * ops)
      throw FormatError{what + ": op lists of " + std::to_string(ops) +
                        " kinds disagree in length (types " +
                        std::to_string(opTypes.size()) + ", operands " +
                        std::to_string(operands.size()) + ")"};
    body.ops.resize(ops);
    for (size_t k = 0; k < ops; ++k) {
      BodyOp &op = body.ops[k];
      if (kinds[k] >= kBodyOpKinds)
        throw FormatError{what + ": op " + std::to_string(k) +
                          " has unknown kind " + std::to_string(kinds[k])};
      op.kind = static_cast<BodyOpKind>(kinds[k]);
      op.type = elementType(opTypes[k], "opTypes");
      op.predicate = predicates[k];
      for (unsigned o = 0; o < 3; ++o)
        op.operands[o] = operands[3 * k + o];
      op.constant = constants[k];
    }
    package.kernels.push_back(std::make_shared<ElementwiseKernel>(
        fromText(entry.getName()), fromText(entry.getSymbol()), std::move(body)));
  }
  // retiredKernelObject (formats 1 and 2) is machine code: never read.
  package.kernelAbiVersion = in.getKernelAbiVersion();
  auto metadata = in.getMetadata();
  package.metadata.resize(metadata.size());
  for (size_t i = 0; i < metadata.size(); ++i) {
    package.metadata[i].first = fromText(metadata[i].getKey());
    package.metadata[i].second = fromText(metadata[i].getValue());
  }
  auto buffers = in.getBuffers();
  package.buffers.resize(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    PackageBuffer &buffer = package.buffers[i];
    buffer.name = fromText(buffers[i].getName());
    // Range-checked by validatePackage.
    buffer.memoryClass = static_cast<MemoryClass>(buffers[i].getMemoryClass());
    buffer.address = buffers[i].getAddress();
    buffer.bytes = buffers[i].getBytes();
    buffer.tiles = toVector<uint32_t>(buffers[i].getTiles());
    buffer.firstStep = buffers[i].getFirstStep();
    buffer.lastStep = buffers[i].getLastStep();
    buffer.location = fromText(buffers[i].getLocation());
  }
  auto loops = in.getLoops();
  package.loops.resize(loops.size());
  for (size_t i = 0; i < loops.size(); ++i) {
    PackageLoop &loop = package.loops[i];
    loop.name = fromText(loops[i].getName());
    loop.count = loops[i].getCount();
    loop.steps = loops[i].getSteps();
    loop.location = fromText(loops[i].getLocation());
  }
  package.results = in.getResults();
  auto constants = in.getConstants();
  package.constants.resize(constants.size());
  for (size_t i = 0; i < constants.size(); ++i) {
    package.constants[i].argument = constants[i].getArgument();
    capnp::Data::Reader data = constants[i].getData();
    package.constants[i].bytes.assign(data.begin(), data.end());
  }
}

std::optional<std::string> parse(const uint8_t *data, size_t size,
                                 Package &package) {
  if (size == 0)
    return std::string("empty input");
  // Checked before the copy below, which would otherwise be the first thing
  // a hostile size allocates.
  if (size > PackageLimits::kMaxBytes)
    return std::to_string(size) + " bytes is more than the " +
           std::to_string(PackageLimits::kMaxBytes) + " a package may have";
  if (size % sizeof(capnp::word) != 0)
    return std::to_string(size) +
           " bytes is not a whole number of 8-byte words (truncated?)";
  // The caller's buffer need not be word aligned.
  kj::Array<capnp::word> words =
      kj::heapArray<capnp::word>(size / sizeof(capnp::word));
  std::memcpy(words.begin(), data, size);

  capnp::ReaderOptions options;
  // Each pointer is followed once, so an honest message reads about its own
  // size; the slack admits nothing hostile: a list of zero-sized elements
  // with a huge count is charged a word per element and stops here instead
  // of making us allocate its vector.
  options.traversalLimitInWords = 2 * words.size() + 1024;
  options.nestingLimit = 16;
  capnp::FlatArrayMessageReader reader(words.asPtr(), options);
  if (reader.getEnd() != words.end())
    return std::to_string(size - (reader.getEnd() - words.begin()) *
                                     sizeof(capnp::word)) +
           " bytes of trailing data after the message";
  readPackage(reader.getRoot<wire::Package>(), package);
  return std::nullopt;
}

} // namespace

std::vector<uint8_t> ipu::serializePackage(const Package &package) {
  try {
    capnp::MallocMessageBuilder message;
    writePackage(package, message.initRoot<wire::Package>());
    kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
    kj::ArrayPtr<const kj::byte> bytes = words.asBytes();
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
  } catch (const kj::Exception &e) {
    // Only a list beyond Cap'n Proto's 2^29-element limit gets here; callers
    // are built without exceptions, so stop loudly rather than unwind
    // through them.
    std::fprintf(stderr, "fatal: cannot serialise package: %s\n",
                 e.getDescription().cStr());
    std::abort();
  }
}

std::optional<std::string>
ipu::deserializePackage(const uint8_t *data, size_t size, Package &package) {
  std::optional<std::string> error;
  try {
    package = Package();
    error = parse(data, size, package);
  } catch (const FormatError &e) {
    error = e.message;
  } catch (const kj::Exception &e) {
    error = std::string(e.getDescription().cStr());
  } catch (const std::bad_alloc &) {
    error = std::string("out of memory while reading");
  } catch (const std::exception &e) {
    error = std::string(e.what());
  } catch (...) {
    error = std::string("unknown error while reading");
  }
  if (!error)
    return std::nullopt;
  // Nothing half-read leaks out.
  package = Package();
  return "corrupt package: " + *error;
}

std::optional<std::string> ipu::writePackageFile(const std::string &path,
                                                 const Package &package) {
  std::vector<uint8_t> bytes = serializePackage(package);
  if (std::optional<std::string> error = writeFileBytes(path, bytes))
    return "cannot write package '" + path + "': " + *error;
  return std::nullopt;
}

std::optional<std::string> ipu::readPackageBytes(const std::string &path,
                                                 std::vector<uint8_t> &bytes) {
  bytes.clear();
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "cannot open package '" + path + "': " + std::strerror(errno);
  auto tooLarge = [&](const std::string &size) {
    return "package '" + path + "' is " + size + " bytes, more than the " +
           std::to_string(PackageLimits::kMaxBytes) + " a package may have";
  };
  // A regular file says its size: refuse it before reading any of it.
  struct stat status;
  if (fstat(fileno(file), &status) == 0 && S_ISREG(status.st_mode) &&
      uint64_t(status.st_size) > PackageLimits::kMaxBytes) {
    std::fclose(file);
    return tooLarge(std::to_string(status.st_size));
  }
  // Read in chunks: the path may be a pipe or a device without a size, so
  // the bound is also kept while reading.
  uint8_t chunk[1 << 16];
  size_t got;
  errno = 0;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    if (got > PackageLimits::kMaxBytes - bytes.size()) {
      std::fclose(file);
      return tooLarge("at least " + std::to_string(bytes.size() + got));
    }
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  int readErrno = errno;
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return "cannot read package '" + path + "': " + std::strerror(readErrno);
  return std::nullopt;
}

std::optional<std::string> ipu::readPackageFile(const std::string &path,
                                                Package &package) {
  std::vector<uint8_t> bytes;
  if (auto error = readPackageBytes(path, bytes))
    return error;
  if (auto error = deserializePackage(bytes.data(), bytes.size(), package))
    return "package '" + path + "': " + *error;
  return std::nullopt;
}

namespace {
struct ReferenceKindRow {
  std::string_view name;
  unsigned arity;
};
constexpr ReferenceKindRow kReferenceKindRows[] = {
#define IPU_REFERENCE_KIND(Kind, name, arity) {name, arity},
#include "IPU/Package/ReferenceKinds.def"
};
} // namespace

std::string_view ipu::referenceKindName(ReferenceKind kind) {
  return unsigned(kind) < kReferenceKinds ? kReferenceKindRows[unsigned(kind)].name
                                          : "unknown";
}

unsigned ipu::referenceKindArity(ReferenceKind kind) {
  return unsigned(kind) < kReferenceKinds ? kReferenceKindRows[unsigned(kind)].arity : 0;
}

std::string ipu::referenceKindNames() {
  std::string names;
  for (const ReferenceKindRow &row : kReferenceKindRows)
    names += (names.empty() ? "" : ", ") + std::string(row.name);
  return names;
}

std::optional<ReferenceKind> ipu::parseReferenceKind(std::string_view name) {
  for (unsigned kind = 0; kind < kReferenceKinds; ++kind)
    if (kReferenceKindRows[kind].name == name)
      return ReferenceKind(kind);
  return std::nullopt;
}
