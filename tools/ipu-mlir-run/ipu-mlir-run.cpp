//===- ipu-mlir-run.cpp - Upstream MLIR's own execution of an input -------===//
//
// Runs a linalg-on-tensors module (what python -m ipu_export writes, or any
// module ipu-opt takes) on the host CPU through upstream MLIR alone:
// one-shot bufferization, linalg to loops, lowering to the LLVM dialect,
// and LLVM's JIT (mlir::ExecutionEngine). None of our import, planning or
// kernels is involved, so its results are an independent reference for
// ours: a misreading of the IR by our import shows up as a mismatch even
// where no framework is at hand.
//
//   ipu-mlir-run MODEL.mlir --inputs DIR [--outputs DIR] [--expect DIR]
//
// Inputs are DIR/argN.npy, each in the shape and type its argument
// declares. --outputs writes each result as DIR/resultN.npy in the shape
// the function returns; `ipu-run PACKAGE --expect DIR` then compares the
// device's results with them. --expect compares these results with given
// arrays (a framework's), with ipu-run's tolerances and PASS/FAIL lines.
// Arguments and results are ranked tensors of static shape, of f32 or f16.
//
// The module runs as the user, so ipu-mlir-run runs only what ipu-opt
// imports (Admission.h): no calls, declarations, llvm dialect or loops of
// unknown count; its work and memory are estimated from the static shapes
// and refused past --max-work and --max-bytes before anything is lowered;
// a watchdog ends the process past --time-limit.
//
//===----------------------------------------------------------------------===//

#include "Admission.h"

#include "IPU/Reference/Expect.h"
#include "IPU/Runtime/HostData.h"
#include "IPU/Runtime/Npy.h"
#include "IPU/Support/Escape.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"

#include <limits>
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IPU_MLIR_RUN_LSAN 1
#include <sanitizer/lsan_interface.h>
#endif
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||                  \
    __has_feature(thread_sanitizer)
// Sanitizers reserve terabytes of address space: no RLIMIT_AS under them.
#define IPU_MLIR_RUN_SANITIZED 1
#endif
#endif

using namespace mlir;

namespace {

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<module.mlir>"),
                                     llvm::cl::Required);
llvm::cl::opt<std::string> inputsDir("inputs",
                                     llvm::cl::desc("Read argument N from DIR/argN.npy"),
                                     llvm::cl::value_desc("DIR"), llvm::cl::Required);
llvm::cl::opt<std::string> outputsDir(
    "outputs", llvm::cl::desc("Write result N to DIR/resultN.npy, creating DIR"),
                                      llvm::cl::value_desc("DIR"));
llvm::cl::opt<std::string> expectDir(
    "expect", llvm::cl::desc("Compare result N with DIR/resultN.npy"),
    llvm::cl::value_desc("DIR"));
llvm::cl::opt<std::string> functionName(
    "function",
    llvm::cl::desc("The function to run (default: main, else the module's only function)"));
llvm::cl::opt<uint64_t> maxBytes(
    "max-bytes",
    llvm::cl::desc("Refuse a module whose tensors add up to more bytes (default "
                   "16 GiB; one SigLIP so400m layer allocates 1 GB)"),
    llvm::cl::init(uint64_t(16) << 30));
llvm::cl::opt<uint64_t> maxWork(
    "max-work",
    llvm::cl::desc("Refuse a module of more scalar operations, elements times "
                   "iterations (default 2^40: about what runs in 600 s; one "
                   "SigLIP so400m layer is 6.0e10)"),
    llvm::cl::init(uint64_t(1) << 40));
llvm::cl::opt<double> timeLimit(
    "time-limit",
    llvm::cl::desc("End the process after this many seconds of lowering, "
                   "compiling and running (default 600; 0: none)"),
    llvm::cl::init(600));

/// What the process is doing, for the watchdog's and the signal handlers'
/// messages.
std::atomic<const char *> phase{"reading the module"};

/// Ends the process with a message once `seconds` pass, unless stop() came
/// first: the JIT's code cannot be interrupted any other way.
class Watchdog {
public:
  explicit Watchdog(double seconds) {
    if (seconds <= 0)
      return;
    thread = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mutex);
      if (stopped.wait_for(lock, std::chrono::duration<double>(seconds),
                           [this] { return done; }))
        return;
      char limit[32];
      std::snprintf(limit, sizeof(limit), "%g", seconds);
      std::string message = "ipu-mlir-run: error: the time limit of " + std::string(limit) +
                            " s ran out while " + phase.load() + " (--time-limit sets it)\n";
      (void)!::write(STDERR_FILENO, message.data(), message.size());
      ::_exit(1);
    });
  }
  ~Watchdog() { stop(); }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    stopped.notify_all();
    if (thread.joinable())
      thread.join();
  }

private:
  std::mutex mutex;
  std::condition_variable stopped;
  bool done = false;
  std::thread thread;
};

/// A fault in the JIT's code (a failed cf.assert aborts) ends the process
/// with a message and exit code 1, not a crash.
extern "C" void onRunSignal(int signal) {
  // The failed assertion's message went to stdout through puts.
  if (signal == SIGABRT)
    std::fflush(stdout);
  const char *what = signal == SIGABRT ? "aborted (a failed cf.assert: its message is above)"
                     : signal == SIGFPE ? "stopped on SIGFPE (an integer division by zero)"
                     : signal == SIGSEGV ? "stopped on SIGSEGV (an allocation past the "
                                           "address-space limit, or a fault)"
                     : signal == SIGBUS ? "stopped on SIGBUS"
                                        : "stopped on SIGILL";
  const char *prefix = "ipu-mlir-run: error: the module ";
  (void)!::write(STDERR_FILENO, prefix, std::strlen(prefix));
  (void)!::write(STDERR_FILENO, what, std::strlen(what));
  (void)!::write(STDERR_FILENO, " while it ran\n", 14);
  ::_exit(1);
}

constexpr int kRunSignals[] = {SIGABRT, SIGFPE, SIGSEGV, SIGBUS, SIGILL};

/// Installs onRunSignal for the run's duration, restoring the handlers
/// before (LLVM's) after.
class RunSignals {
public:
  RunSignals() {
    struct sigaction action = {};
    action.sa_handler = onRunSignal;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kRunSignals); ++i)
      sigaction(kRunSignals[i], &action, &before[i]);
  }
  ~RunSignals() {
    for (size_t i = 0; i < std::size(kRunSignals); ++i)
      sigaction(kRunSignals[i], &before[i], nullptr);
  }

private:
  struct sigaction before[std::size(kRunSignals)];
};

/// Upstream MLIR's lowering of linalg on tensors to the LLVM dialect, as
/// mlir-opt would run it; every pass is upstream's own.
/// In two parts: strided copies become linalg.copy between them.
constexpr const char *kBufferize =
    "func.func(convert-elementwise-to-linalg),"
    "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
    "function-boundary-type-conversion=identity-layout-map}";
constexpr const char *kLowering =
    "func.func(convert-linalg-to-loops),convert-scf-to-cf,"
    "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
    "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,"
    "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts";

/// Rewrites every scalar `arith.extf` from f8E4M3FN (OCP's 1-4-3: bias 7,
/// no infinities, 0x7F and 0xFF NaN) into integer arithmetic on its bits:
/// LLVM has no f8 type, and upstream's arith-to-llvm leaves the extension
/// unconverted. Exact: every f8E4M3FN value is an f32, then exact in any
/// wider target (f16 holds them all). Written from the format's definition
/// (APFloat's semantics), not from our compiler's decoder.
void expandF8E4M3FNExtensions(ModuleOp module) {
  SmallVector<arith::ExtFOp> extensions;
  module.walk([&](arith::ExtFOp op) {
    if (isa<Float8E4M3FNType>(op.getIn().getType()))
      extensions.push_back(op);
  });
  for (arith::ExtFOp op : extensions) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
    auto constant = [&](Type type, int64_t value) -> Value {
      return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
    };
    Value bits = arith::ExtUIOp::create(
        b, loc, i32, arith::BitcastOp::create(b, loc, i8, op.getIn()));
    Value exponent = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bits, constant(i32, 3)), constant(i32, 15));
    Value mantissa = arith::AndIOp::create(b, loc, bits, constant(i32, 7));
    // Normal: (8 + m) * 2^(e - 10); subnormal (e = 0): m * 2^-9.
    Value isNormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, exponent,
                                           constant(i32, 0));
    Value significand = arith::SelectOp::create(
        b, loc, isNormal, arith::OrIOp::create(b, loc, mantissa, constant(i32, 8)), mantissa);
    Value scaleExponent = arith::SelectOp::create(
        b, loc, isNormal, arith::AddIOp::create(b, loc, exponent, constant(i32, 127 - 10)),
        constant(i32, 127 - 9));
    Value scale = arith::BitcastOp::create(
        b, loc, f32, arith::ShLIOp::create(b, loc, scaleExponent, constant(i32, 23)));
    Value magnitude = arith::MulFOp::create(
        b, loc, arith::UIToFPOp::create(b, loc, f32, significand), scale);
    Value negative = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, bits, constant(i32, 0x80)), constant(i32, 0));
    Value value = arith::SelectOp::create(
        b, loc, negative, arith::NegFOp::create(b, loc, magnitude), magnitude);
    Value isNaN = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, bits, constant(i32, 0x7F)), constant(i32, 0x7F));
    Value nan = arith::ConstantOp::create(
        b, loc, f32, b.getFloatAttr(f32, std::numeric_limits<double>::quiet_NaN()));
    value = arith::SelectOp::create(b, loc, isNaN, nan, value);
    Type out = op.getType();
    if (!out.isF32())
      value = out.getIntOrFloatBitWidth() < 32
                  ? Value(arith::TruncFOp::create(b, loc, out, value))
                  : Value(arith::ExtFOp::create(b, loc, out, value));
    op.replaceAllUsesWith(value);
    op.erase();
  }
}

/// A memref.copy between buffers of other than the identity layout (a
/// slice of run-time stride) lowers to a call of `memrefCopy`, from a
/// runtime library the JIT does not link: as linalg.copy, it becomes loops.
void copiesAsLoops(ModuleOp module) {
  module.getContext()->loadDialect<linalg::LinalgDialect>();
  SmallVector<memref::CopyOp> copies;
  module.walk([&](memref::CopyOp copy) {
    auto identity = [](Value buffer) {
      auto type = dyn_cast<MemRefType>(buffer.getType());
      return type && type.getLayout().isIdentity();
    };
    if (!identity(copy.getSource()) || !identity(copy.getTarget()))
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
    copy.erase();
  }
}

int fail(const std::string &message) {
  llvm::errs() << "ipu-mlir-run: error: " << message << "\n";
  return 1;
}

/// Our element type of a tensor's element type, or null for another.
std::optional<ipu::ElementType> elementTypeOf(Type type) {
  if (type.isF32())
    return ipu::ElementType::F32;
  if (type.isF16())
    return ipu::ElementType::F16;
  return std::nullopt;
}

struct TensorValue {
  ipu::ElementType type;
  std::vector<int64_t> shape;
};

/// The argument or result types of the function, as our values; an error
/// naming the first that is not a static tensor of f32 or f16.
std::optional<std::string> valuesOf(TypeRange types, const char *what,
                                    std::vector<TensorValue> &values) {
  for (auto [index, type] : llvm::enumerate(types)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<ipu::ElementType> element =
        tensor ? elementTypeOf(tensor.getElementType()) : std::nullopt;
    if (!tensor || !tensor.hasStaticShape() || !element) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << what << " " << index << " is " << type
         << ": only ranked tensors of static shape and of f32 or f16 are run";
      return text;
    }
    values.push_back({*element, std::vector<int64_t>(tensor.getShape())});
  }
  return std::nullopt;
}

/// A memref descriptor as the LLVM lowering passes it: allocated and
/// aligned pointers, offset, then sizes and strides, each a 64-bit word.
struct Descriptor {
  std::vector<int64_t> words;
  explicit Descriptor(void *data, const std::vector<int64_t> &shape) {
    words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
    words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
    words.push_back(0);
    words.insert(words.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;)
      strides[d - 1] = strides[d] * shape[d];
    words.insert(words.end(), strides.begin(), strides.end());
  }
};

/// Result `value` from the descriptor at `words` (3 + 2 rank words), copied
/// out by its strides into row-major bytes.
std::vector<uint8_t> readResult(const TensorValue &value, const int64_t *words) {
  const size_t rank = value.shape.size();
  const auto *base = reinterpret_cast<const uint8_t *>(intptr_t(words[1]));
  const int64_t offset = words[2];
  const int64_t *sizes = words + 3, *strides = words + 3 + rank;
  const unsigned bytes = ipu::elementBytes(value.type);
  uint64_t elements = 1;
  for (size_t d = 0; d < rank; ++d)
    elements *= uint64_t(sizes[d]);
  std::vector<uint8_t> out(elements * bytes);
  std::vector<int64_t> index(rank, 0);
  for (uint64_t e = 0; e < elements; ++e) {
    int64_t at = offset;
    for (size_t d = 0; d < rank; ++d)
      at += index[d] * strides[d];
    std::memcpy(&out[e * bytes], base + at * bytes, bytes);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Runs a linalg-on-tensors module on the host through upstream MLIR "
      "(bufferization, lowering to LLVM, ExecutionEngine): an independent "
      "reference for ipu-run's results\n");
  if (!(timeLimit >= 0 && std::isfinite(timeLimit)))
    return fail("--time-limit expects a number of seconds (0: none)");
  Watchdog watchdog(timeLimit);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  DialectRegistry registry;
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerConversionPasses();
  bufferization::registerBufferizationPasses();
  registerLinalgPasses();
  memref::registerMemRefPasses();

  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  std::string error;
  auto buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + ipu::reportValue(inputFile));

  // What the module may do, before anything of it is lowered or run.
  ipu_mlir_run::RunEstimate estimate;
  if (auto why = ipu_mlir_run::admitModule(*module, {maxBytes, maxWork}, estimate))
    return fail(*why);

  func::FuncOp function;
  if (functionName.empty()) {
    std::vector<func::FuncOp> defined;
    for (auto f : module->getOps<func::FuncOp>())
      if (!f.isExternal())
        defined.push_back(f);
    function = module->lookupSymbol<func::FuncOp>("main");
    if (!function && defined.size() == 1)
      function = defined.front();
    if (!function)
      return fail("the module has " + std::to_string(defined.size()) +
                  " functions with a body and none is main: --function names one");
    functionName = function.getSymName().str();
  } else {
    function = module->lookupSymbol<func::FuncOp>(functionName);
  }
  if (!function || function.isExternal())
    return fail("the module has no function " + ipu::reportValue(functionName) +
                " with a body (--function names another)");
  std::vector<TensorValue> arguments, results;
  if (auto why = valuesOf(function.getArgumentTypes(), "argument", arguments))
    return fail(*why);
  if (auto why = valuesOf(function.getResultTypes(), "result", results))
    return fail(*why);

  // An op that accumulates onto tensor.empty reads undefined values, and
  // upstream's execution of it returns whatever the memory held; ipu-opt
  // reads them as zeros. Said, so that a mismatch there is not taken for a
  // misreading.
  function.walk([&](linalg::LinalgOp op) {
    for (OpOperand &init : op.getDpsInitsMutable())
      if (init.get().getDefiningOp<tensor::EmptyOp>() && op.payloadUsesValueFromOperand(&init)) {
        std::string where = "unknown location";
        if (auto at = dyn_cast<FileLineColLoc>(op->getLoc()))
          where = at.getFilename().str() + ":" + std::to_string(at.getLine()) + ":" +
                  std::to_string(at.getColumn());
        llvm::errs() << "ipu-mlir-run: warning: " << ipu::escapeText(where) << ": "
                     << op->getName().getStringRef()
                     << " accumulates onto tensor.empty, whose values are undefined: "
                        "so is its result here (ipu-opt takes them as zeros)\n";
      }
  });

  // Inputs first: a missing file is found before the lowering's work.
  phase = "reading the inputs";
  std::vector<std::vector<uint8_t>> inputData;
  for (auto [index, value] : llvm::enumerate(arguments)) {
    const std::string path =
        inputsDir + "/" + ipu::npyFileName("arg" + std::to_string(index), value.type);
    ipu::NpyArray array;
    if (auto why = ipu::readNpy(path, array))
      return fail(*why);
    if (array.descr != ipu::npyDescr(value.type) || array.shape != value.shape)
      return fail(path + ": argument " + std::to_string(index) + " is " +
                  ipu::npyShapeText(value.shape) + " " + std::string(ipu::elementTypeName(value.type)) +
                  ", the file holds " + ipu::npyShapeText(array.shape) + " " +
                  ipu::npyTypeName(array.descr));
    inputData.push_back(std::move(array.data));
  }

  // The other functions are never called (no calls are run): not compiled.
  for (auto other : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (other != function)
      other.erase();

  // The tensors' memory is within --max-bytes by the estimate; the address
  // space bounds what the estimate does not see (the compiler's own), with
  // room for the process and its inputs.
#if !IPU_MLIR_RUN_SANITIZED
  {
    uint64_t inputBytes = 0;
    for (const auto &data : inputData)
      inputBytes += data.size();
    uint64_t room;
    const bool fits = !__builtin_add_overflow(uint64_t(maxBytes),
                                              2 * inputBytes + (uint64_t(8) << 30), &room);
    struct rlimit limit;
    if (fits && getrlimit(RLIMIT_AS, &limit) == 0 &&
        (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > room)) {
      limit.rlim_cur = room;
      setrlimit(RLIMIT_AS, &limit);
    }
  }
#endif

  auto start = std::chrono::steady_clock::now();
  phase = "lowering the module";
  ipu_mlir_run::guardIndices(*module);
  expandF8E4M3FNExtensions(*module);
  for (const char *pipeline : {kBufferize, kLowering}) {
    PassManager pm(&context, ModuleOp::getOperationName());
    if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
      return fail("the lowering pipeline does not parse");
    if (failed(pm.run(*module)))
      return fail("upstream MLIR's lowering of " + ipu::reportValue(inputFile) +
                  " failed (its diagnostics are above)");
    if (pipeline == kBufferize)
      copiesAsLoops(*module);
  }
  const double lowerSeconds = secondsSince(start);

  start = std::chrono::steady_clock::now();
  phase = "compiling the module";
  // optLevel 2: the loops linalg lowers to run about as fast as plain C.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, /*targetMachine=*/nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << engine.takeError();
    return fail("the JIT could not build the module: " + ipu::reportValue(text));
  }

  // The packed wrapper takes a pointer to each LLVM argument (every word of
  // every descriptor) and, last, one to the result: one descriptor, or a
  // struct of them, 64-bit words throughout.
  std::vector<Descriptor> descriptors;
  for (auto [index, value] : llvm::enumerate(arguments))
    descriptors.emplace_back(inputData[index].data(), value.shape);
  std::vector<void *> packed;
  for (Descriptor &d : descriptors)
    for (int64_t &word : d.words)
      packed.push_back(&word);
  size_t resultWords = 0;
  for (const TensorValue &value : results)
    resultWords += 3 + 2 * value.shape.size();
  std::vector<int64_t> resultStorage(std::max<size_t>(resultWords, 1), 0);
  if (!results.empty())
    packed.push_back(resultStorage.data());
  // The lowered code allocates its buffers with malloc and, returning some
  // of them, never frees them all: a one-shot run, whose memory the exit
  // returns. Under LeakSanitizer (make test-sanitize) those allocations
  // alone are exempt from the leak check.
#if IPU_MLIR_RUN_LSAN
  __lsan_disable();
#endif
  phase = "running the module";
  llvm::Error invoked = [&] {
    RunSignals signals;
    return (*engine)->invokePacked(functionName, packed);
  }();
#if IPU_MLIR_RUN_LSAN
  __lsan_enable();
#endif
  if (invoked) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << invoked;
    return fail("running " + ipu::reportValue(functionName) + " failed: " +
                ipu::reportValue(text));
  }
  const double runSeconds = secondsSince(start);
  watchdog.stop();

  std::vector<ipu::ExpectedResult> computed;
  size_t at = 0;
  for (const TensorValue &value : results) {
    computed.push_back({value.type, value.shape, readResult(value, &resultStorage[at])});
    at += 3 + 2 * value.shape.size();
  }
  if (!outputsDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputsDir))
      return fail("cannot create " + ipu::reportValue(outputsDir) + ": " + ec.message());
    for (auto [index, result] : llvm::enumerate(computed)) {
      ipu::NpyArray array;
      array.descr = std::string(ipu::npyDescr(result.type));
      array.itemBytes = ipu::elementBytes(result.type);
      array.shape = result.shape;
      array.data = result.bytes;
      const std::string path =
          outputsDir + "/" + ipu::npyFileName("result" + std::to_string(index), result.type);
      if (auto why = ipu::writeNpy(path, array))
        return fail(*why);
    }
  }
  llvm::outs() << "mlirReference=" << ipu::reportValue(inputFile)
               << " function=" << ipu::reportValue(functionName)
               << " arguments=" << arguments.size() << " results=" << results.size()
               << " lowerSeconds=" << llvm::format("%.3f", lowerSeconds)
               << " jitAndRunSeconds=" << llvm::format("%.3f", runSeconds)
               << " estimatedWork=" << estimate.work << " estimatedBytes=" << estimate.bytes
               << "\n";
  if (expectDir.empty())
    return 0;
  ipu::ExpectReport report;
  if (auto why = ipu::compareExpectedArrays(expectDir, computed, report))
    return fail(*why);
  for (const std::string &line : report.lines)
    llvm::outs() << line << "\n";
  llvm::outs() << ipu::expectSummaryLine(expectDir, report) << "\n";
  return report.passed() ? 0 : 1;
}
