// svd/<algo>/<dtype>/<n>: singular value decomposition of a random n x n matrix with cuSOLVER,
// singular values and both sets of vectors:
//   gesvd  - QR iteration (cusolverDnXgesvd), the LAPACK-style reference
//   gesvdj - Jacobi (cusolverDn<S|D>gesvdj, default tolerance and sweeps)
//   gesvdp - polar decomposition (cusolverDnXgesvdp)
// The input is restored from a pristine copy before every sample, outside the timed region.
// Check (in double on the device, with cuBLAS and fp64 gesvd): relative reconstruction error
// ||A - U S V^T||_F / ||A||_F, orthogonality ||U^T U - I||_F / sqrt(n) (and V's), and the
// singular values against fp64 gesvd's, max |s - s_ref| / s_ref_max, all within c n eps of the
// dtype with c from each algorithm's measured accuracy (tolerance() below); the values sorted
// and non-negative; cuSOLVER's info == 0.
// All three are reported as counters, and in the message of a row that fails.
// gesvdp in fp32 misses that bound for many inputs (measured on the H200 over 8 seeds: at
// n = 1024, 2048, 4096 in 2, 5 and 8 of them, with every singular value near one value and a
// reconstruction error of 38-76; docs/results/h200/svd-accuracy.md): such a row, by that
// signature alone (gesvdp_fp32_miss), is reported as inaccurate here, with its figures, and not
// timed. The bound is not loosened for it.
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/cubench.h"
#include "kernels/fill.h"
#include "kernels/reference.h"

namespace cubench {
namespace {

enum class SvdAlgo { gesvd, gesvdj, gesvdp };

// The check a planted fault (every singular value 5% larger) must meet (ValidationError::check).
constexpr const char* kSigmaCheck = "singular values against fp64 gesvd's";

constexpr EnumName<SvdAlgo> kAlgos[] = {
    {SvdAlgo::gesvd, "gesvd"}, {SvdAlgo::gesvdj, "gesvdj"}, {SvdAlgo::gesvdp, "gesvdp"}};

cudaDataType_t cuda_type(DType t) { return t == DType::fp64 ? CUDA_R_64F : CUDA_R_32F; }

// cuSOLVER's typed Jacobi entry points, picked by element type.
cusolverStatus_t gesvdj_buffer(cusolverDnHandle_t h, int n, const float* a, const float* s,
                               const float* u, const float* v, int* lwork, gesvdjInfo_t p) {
  return cusolverDnSgesvdj_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, a, n, s, u, n, v, n,
                                      lwork, p);
}
cusolverStatus_t gesvdj_buffer(cusolverDnHandle_t h, int n, const double* a, const double* s,
                               const double* u, const double* v, int* lwork, gesvdjInfo_t p) {
  return cusolverDnDgesvdj_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, a, n, s, u, n, v, n,
                                      lwork, p);
}
cusolverStatus_t gesvdj(cusolverDnHandle_t h, int n, float* a, float* s, float* u, float* v,
                        float* work, int lwork, int* info, gesvdjInfo_t p) {
  return cusolverDnSgesvdj(h, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, a, n, s, u, n, v, n, work, lwork,
                           info, p);
}
cusolverStatus_t gesvdj(cusolverDnHandle_t h, int n, double* a, double* s, double* u, double* v,
                        double* work, int lwork, int* info, gesvdjInfo_t p) {
  return cusolverDnDgesvdj(h, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, a, n, s, u, n, v, n, work, lwork,
                           info, p);
}

class Svd final : public BenchmarkCase {
 public:
  Svd(SvdAlgo algo, DType t, int n) : algo_(algo), t_(t), n_(n) {}

  ~Svd() override {
    if (jacobi_) cusolverDnDestroyGesvdjInfo(jacobi_);
    if (params_) cusolverDnDestroyParams(params_);
    if (solver_) cusolverDnDestroy(solver_);
    if (blas_) cublasDestroy(blas_);
  }

  void setup(Env& env) override {
    cudaStream_t s = env.stream();
    const std::size_t elems = std::size_t(n_) * n_, bytes = elems * dtype_bytes(t_);
    pristine_ = env.alloc(bytes);
    a_ = env.alloc(bytes);
    u_ = env.alloc(bytes);
    v_ = env.alloc(bytes);
    s_ = env.alloc(n_ * dtype_bytes(t_));
    info_ = env.alloc(sizeof(int));
    fill_uniform(t_, pristine_.get(), elems, env.fresh_seed(), -1.f, 1.f, s);
    CUBENCH_CUDA_LAUNCHED();

    CUBENCH_CUSOLVER(cusolverDnCreate(&solver_));
    CUBENCH_CUSOLVER(cusolverDnSetStream(solver_, s));
    CUBENCH_CUSOLVER(cusolverDnCreateParams(&params_));
    const cudaDataType_t ct = cuda_type(t_);
    std::size_t device_bytes = 0, host_bytes = 0;
    if (algo_ == SvdAlgo::gesvd) {
      CUBENCH_CUSOLVER(cusolverDnXgesvd_bufferSize(solver_, params_, 'S', 'S', n_, n_, ct, a_.get(),
                                                   n_, ct, s_.get(), ct, u_.get(), n_, ct, v_.get(),
                                                   n_, ct, &device_bytes, &host_bytes));
    } else if (algo_ == SvdAlgo::gesvdp) {
      CUBENCH_CUSOLVER(cusolverDnXgesvdp_bufferSize(
          solver_, params_, CUSOLVER_EIG_MODE_VECTOR, 0, n_, n_, ct, a_.get(), n_, ct, s_.get(), ct,
          u_.get(), n_, ct, v_.get(), n_, ct, &device_bytes, &host_bytes));
    } else {
      CUBENCH_CUSOLVER(cusolverDnCreateGesvdjInfo(&jacobi_));
      int lwork = 0;
      if (t_ == DType::fp64)
        CUBENCH_CUSOLVER(gesvdj_buffer(solver_, n_, a_.as<double>(), s_.as<double>(),
                                       u_.as<double>(), v_.as<double>(), &lwork, jacobi_));
      else
        CUBENCH_CUSOLVER(gesvdj_buffer(solver_, n_, a_.as<float>(), s_.as<float>(), u_.as<float>(),
                                       v_.as<float>(), &lwork, jacobi_));
      lwork_ = lwork;
      device_bytes = std::size_t(lwork) * dtype_bytes(t_);
    }
    work_ = env.alloc(device_bytes > 0 ? device_bytes : 1);
    CUBENCH_CUDA(cudaMemsetAsync(work_.get(), 0, work_.bytes(), s));
    device_work_bytes_ = device_bytes;
    host_work_.resize(host_bytes > 0 ? host_bytes : 1);
    CUBENCH_CUBLAS(cublasCreate(&blas_));
    CUBENCH_CUBLAS(cublasSetStream(blas_, s));
  }

  void prepare(Env& env) override {
    CUBENCH_CUDA(cudaMemcpyAsync(a_.get(), pristine_.get(), pristine_.bytes(),
                                 cudaMemcpyDeviceToDevice, env.stream()));
  }

  void run(Env&) override {
    const cudaDataType_t ct = cuda_type(t_);
    int* info = info_.as<int>();
    switch (algo_) {
      case SvdAlgo::gesvd:
        CUBENCH_CUSOLVER(cusolverDnXgesvd(solver_, params_, 'S', 'S', n_, n_, ct, a_.get(), n_, ct,
                                          s_.get(), ct, u_.get(), n_, ct, v_.get(), n_, ct,
                                          work_.get(), device_work_bytes_, host_work_.data(),
                                          host_work_.size(), info));
        break;
      case SvdAlgo::gesvdp:
        CUBENCH_CUSOLVER(cusolverDnXgesvdp(
            solver_, params_, CUSOLVER_EIG_MODE_VECTOR, 0, n_, n_, ct, a_.get(), n_, ct, s_.get(),
            ct, u_.get(), n_, ct, v_.get(), n_, ct, work_.get(), device_work_bytes_,
            host_work_.data(), host_work_.size(), info, &err_sigma_));
        break;
      case SvdAlgo::gesvdj:
        if (t_ == DType::fp64)
          CUBENCH_CUSOLVER(gesvdj(solver_, n_, a_.as<double>(), s_.as<double>(), u_.as<double>(),
                                  v_.as<double>(), work_.as<double>(), lwork_, info, jacobi_));
        else
          CUBENCH_CUSOLVER(gesvdj(solver_, n_, a_.as<float>(), s_.as<float>(), u_.as<float>(),
                                  v_.as<float>(), work_.as<float>(), lwork_, info, jacobi_));
        break;
    }
  }

  // Poisoned outputs: anything the solver fails to write shows up as NaN in the check.
  void poison_result(Env& env) override {
    for (DeviceBuffer* out : {&u_, &v_, &s_})
      CUBENCH_CUDA(cudaMemsetAsync(out->get(), 0xff, out->bytes(), env.stream()));
  }

  void validate(Env& env) override {
    cudaStream_t s = env.stream();
    int info = 0;
    CUBENCH_CUDA(cudaMemcpyAsync(&info, info_.get(), sizeof info, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    if (info != 0)
      throw ValidationError(describe() + ": cuSOLVER info = " + std::to_string(info) +
                                (info > 0 ? " (did not converge)" : " (bad parameter)"),
                            "cuSOLVER's info");
    measure_accuracy(env);
    try {
      check_accuracy();
    } catch (const ValidationError& e) {
      // Only the documented miss, by its measured signature, is excused: anything else (NaN,
      // unwritten or unsorted output, a miss of another size) stays a wrong result.
      if (algo_ == SvdAlgo::gesvdp && t_ == DType::fp32 && gesvdp_fp32_miss())
        throw KnownInaccuracy(std::string(e.what()) +
                                  " [cuSOLVER's gesvdp in fp32 misses this bound for many inputs: "
                                  "docs/results/h200/svd-accuracy.md]",
                              e.check());
      throw;
    }
  }

  // Every singular value 5% larger (U and V left as they are): their order kept, so the bound,
  // not the ordering test, must catch it. 5%: above the loosest bound at the largest size
  // (gesvdp fp32, 30 n eps = 1.5% at n = 4096), where a 1% scale would pass.
  std::string plant_fault(Env&) override {  // the case's cuBLAS handle is on its stream
    if (t_ == DType::fp64) {
      const double factor = 1.05;
      CUBENCH_CUBLAS(cublasDscal(blas_, n_, &factor, s_.as<double>(), 1));
    } else {
      const float factor = 1.05f;
      CUBENCH_CUBLAS(cublasSscal(blas_, n_, &factor, s_.as<float>(), 1));
    }
    return "every singular value made 5% larger (their order kept)";
  }
  std::string fault_check() const override { return kSigmaCheck; }

  // gesvdp fp32's documented miss (docs/results/h200/svd-accuracy.md, 15 failing seeds of 24 at
  // n = 1024-4096): orthonormal factors and a reconstruction error of 1.19 sqrt(n) each time, the
  // singular values off by up to 0.59 sqrt(n) of the largest (the table's maxima). Windows of
  // about +-25% around those; any other miss is a wrong result.
  bool gesvdp_fp32_miss() const {
    const double root = std::sqrt(double(n_));
    return sorted_nonnegative_ && ortho_error_ <= tolerance() && recon_error_ >= 0.9 * root &&
           recon_error_ <= 1.5 * root && sigma_error_ >= 0.45 * root && sigma_error_ <= 0.75 * root;
  }

  void check_accuracy() const {
    const std::string what = describe() + " (" + accuracy_summary() + ")";
    const double tol = tolerance();
    if (!sorted_nonnegative_)
      throw ValidationError(what + ": singular values not sorted descending and non-negative",
                            "singular values' order");
    require_at_most(what + ": singular values' error max|s - s_ref| / s_ref_max", sigma_error_, tol,
                    kSigmaCheck);
    require_at_most(what + ": reconstruction error ||A - U S V^T|| / ||A||", recon_error_, tol,
                    "reconstruction");
    require_at_most(what + ": orthogonality error ||Q^T Q - I|| / sqrt(n)", ortho_error_, tol,
                    "orthogonality");
  }

  Work work() const override { return {}; }  // no agreed FLOP count for iterative SVDs

  std::string label() const override { return std::string("cuSOLVER ") + name_of(algo_, kAlgos); }

  std::map<std::string, double> counters(double) const override {
    std::map<std::string, double> c = {{"recon_error", recon_error_},
                                       {"ortho_error", ortho_error_},
                                       {"sigma_error", sigma_error_}};
    if (algo_ == SvdAlgo::gesvdp) c["err_sigma"] = err_sigma_;  // gesvdp's own error estimate
    return c;
  }

 private:
  // The bound on each accuracy figure, c n eps, with c from what each algorithm reached on the
  // H200 (docs/results/h200/svd-accuracy.md: 512-4096, seeds 1-3, gesvdp 1-8; the worst of
  // reconstruction, orthogonality and singular values, over n eps): gesvd 0.14, gesvdj 4.4,
  // gesvdp fp64 0.04. c is four times that, so a right result passes and one an algorithm does
  // not give fails; never above LAPACK's test-driver bound of 30 (xDRVBD), which gesvdp fp32
  // keeps: its right results reached 22 n eps, its wrong ones are reported as inaccurate here.
  double tolerance() const {
    const double eps = t_ == DType::fp64 ? std::numeric_limits<double>::epsilon()
                                         : std::numeric_limits<float>::epsilon();
    double c = 30;
    if (algo_ == SvdAlgo::gesvd) c = 0.6;
    if (algo_ == SvdAlgo::gesvdj) c = 18;
    if (algo_ == SvdAlgo::gesvdp && t_ == DType::fp64) c = 0.16;
    return c * n_ * eps;
  }

  std::string accuracy_summary() const {
    std::string text = "reconstruction " + std::to_string(recon_error_) + ", orthogonality " +
                       std::to_string(ortho_error_) + ", singular values " +
                       std::to_string(sigma_error_) + " against fp64 gesvd";
    char buffer[64];
    for (auto [name, value] : {std::pair{"; s_max ", sigma_max_}, {" s_min ", sigma_min_}}) {
      std::snprintf(buffer, sizeof buffer, "%s%.6g", name, value);
      text += buffer;
    }
    if (algo_ == SvdAlgo::gesvdp) text += "; gesvdp's err_sigma " + std::to_string(err_sigma_);
    return text;
  }

  // Every accuracy figure of the last run(), in double on the device: reconstruction,
  // orthogonality of both factors, and the singular values against fp64 gesvd's (values only) of
  // the same input, so a wrong spectrum cannot hide behind a consistent factorisation.
  void measure_accuracy(Env& env) {
    cudaStream_t s = env.stream();
    const std::size_t elems = std::size_t(n_) * n_;
    DeviceBuffer a = env.alloc(elems * 8), u = env.alloc(elems * 8), v = env.alloc(elems * 8);
    DeviceBuffer scratch = env.alloc(elems * 8), sv = env.alloc(n_ * 8);
    convert_to_double(t_, pristine_.get(), a.as<double>(), elems, s);
    convert_to_double(t_, u_.get(), u.as<double>(), elems, s);
    convert_to_double(t_, v_.get(), v.as<double>(), elems, s);
    convert_to_double(t_, s_.get(), sv.as<double>(), n_, s);
    CUBENCH_CUDA_LAUNCHED();
    const std::vector<double> reference = reference_singular_values(env, a);
    // gesvd returns V^T; the others return V.
    const cublasOperation_t v_op = algo_ == SvdAlgo::gesvd ? CUBLAS_OP_N : CUBLAS_OP_T;
    const double one = 1, minus_one = -1;
    double norm_a = 0, norm_r = 0;
    CUBENCH_CUBLAS(cublasDnrm2(blas_, elems, a.as<double>(), 1, &norm_a));
    // scratch = U diag(S); a = a - scratch * op(V)
    CUBENCH_CUBLAS(cublasDdgmm(blas_, CUBLAS_SIDE_RIGHT, n_, n_, u.as<double>(), n_,
                               sv.as<double>(), 1, scratch.as<double>(), n_));
    CUBENCH_CUBLAS(cublasDgemm(blas_, CUBLAS_OP_N, v_op, n_, n_, n_, &minus_one,
                               scratch.as<double>(), n_, v.as<double>(), n_, &one, a.as<double>(),
                               n_));
    CUBENCH_CUBLAS(cublasDnrm2(blas_, elems, a.as<double>(), 1, &norm_r));
    recon_error_ = norm_r / norm_a;
    ortho_error_ =
        std::max(orthogonality(u, CUBLAS_OP_T, scratch, s),
                 orthogonality(v, v_op == CUBLAS_OP_N ? CUBLAS_OP_N : CUBLAS_OP_T, scratch, s));
    std::vector<double> sigma(n_);
    CUBENCH_CUDA(
        cudaMemcpyAsync(sigma.data(), sv.get(), n_ * sizeof(double), cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    sigma_max_ = sigma.front();
    sigma_min_ = sigma.back();
    sorted_nonnegative_ = true;
    sigma_error_ = 0;
    for (int i = 0; i < n_; ++i) {
      if (!(sigma[i] >= 0) || (i > 0 && !(sigma[i] <= sigma[i - 1]))) sorted_nonnegative_ = false;
      // Weyl: a backward error E moves every singular value by at most ||E||_2, so the error is
      // judged against the largest singular value, not each one.
      const double error = std::fabs(sigma[i] - reference[i]) / reference.front();
      if (!(error <= sigma_error_)) sigma_error_ = error;  // NaN sticks
    }
  }

  // fp64 gesvd without vectors on a copy of `a` (left untouched), on the case's handle.
  std::vector<double> reference_singular_values(Env& env, const DeviceBuffer& a) {
    cudaStream_t s = env.stream();
    DeviceBuffer copy = env.alloc(a.bytes()), values = env.alloc(n_ * 8), info = env.alloc(4);
    CUBENCH_CUDA(cudaMemcpyAsync(copy.get(), a.get(), a.bytes(), cudaMemcpyDeviceToDevice, s));
    std::size_t device_bytes = 0, host_bytes = 0;
    CUBENCH_CUSOLVER(cusolverDnXgesvd_bufferSize(
        solver_, params_, 'N', 'N', n_, n_, CUDA_R_64F, copy.get(), n_, CUDA_R_64F, values.get(),
        CUDA_R_64F, nullptr, n_, CUDA_R_64F, nullptr, n_, CUDA_R_64F, &device_bytes, &host_bytes));
    DeviceBuffer work = env.alloc(device_bytes > 0 ? device_bytes : 1);
    std::vector<char> host_work(host_bytes > 0 ? host_bytes : 1);
    CUBENCH_CUSOLVER(cusolverDnXgesvd(solver_, params_, 'N', 'N', n_, n_, CUDA_R_64F, copy.get(),
                                      n_, CUDA_R_64F, values.get(), CUDA_R_64F, nullptr, n_,
                                      CUDA_R_64F, nullptr, n_, CUDA_R_64F, work.get(), device_bytes,
                                      host_work.data(), host_bytes, info.as<int>()));
    int status = 0;
    std::vector<double> result(n_);
    CUBENCH_CUDA(cudaMemcpyAsync(&status, info.get(), sizeof status, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaMemcpyAsync(result.data(), values.get(), n_ * 8, cudaMemcpyDeviceToHost, s));
    CUBENCH_CUDA(cudaStreamSynchronize(s));
    if (status != 0)
      throw Error(describe() + ": the fp64 reference gesvd failed (info " + std::to_string(status) +
                  ")");
    return result;
  }

  std::string describe() const {
    return std::string("svd ") + name_of(algo_, kAlgos) + " " + std::string(dtype_name(t_)) +
           " n=" + std::to_string(n_);
  }

  // ||op(M) op(M)^T - I||_F / sqrt(n): first = CUBLAS_OP_T checks M's columns (U, V),
  // CUBLAS_OP_N its rows (V^T from gesvd).
  double orthogonality(const DeviceBuffer& m, cublasOperation_t first, DeviceBuffer& out,
                       cudaStream_t s) {
    const double one = 1, zero = 0;
    const cublasOperation_t second = first == CUBLAS_OP_T ? CUBLAS_OP_N : CUBLAS_OP_T;
    CUBENCH_CUBLAS(cublasDgemm(blas_, first, second, n_, n_, n_, &one, m.as<double>(), n_,
                               m.as<double>(), n_, &zero, out.as<double>(), n_));
    add_to_diagonal(out.as<double>(), n_, n_, -1.0, s);
    CUBENCH_CUDA_LAUNCHED();
    double norm = 0;
    CUBENCH_CUBLAS(cublasDnrm2(blas_, std::size_t(n_) * n_, out.as<double>(), 1, &norm));
    return norm / std::sqrt(double(n_));
  }

  SvdAlgo algo_;
  DType t_;
  int n_;
  DeviceBuffer pristine_, a_, u_, v_, s_, info_, work_;
  std::size_t device_work_bytes_ = 0;
  int lwork_ = 0;
  std::vector<char> host_work_;
  cusolverDnHandle_t solver_ = nullptr;
  cusolverDnParams_t params_ = nullptr;
  gesvdjInfo_t jacobi_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  double recon_error_ = 0, ortho_error_ = 0, err_sigma_ = 0, sigma_error_ = 0;
  double sigma_max_ = 0, sigma_min_ = 0;
  bool sorted_nonnegative_ = false;
};

void register_svd() {
  std::vector<SvdAlgo> algos = {SvdAlgo::gesvd, SvdAlgo::gesvdj};
  if (CUBENCH_HAS_XGESVDP) algos.push_back(SvdAlgo::gesvdp);  // where this cuSOLVER has it
  Family("svd", "singular values and vectors of a random n x n matrix through cuSOLVER")
      .axis(enum_axis("algo", kAlgos, algos))
      .axis(dtype_axis({DType::fp32, DType::fp64}))
      .axis(int_axis("n", {512, 1024, 2048, 4096}))
      .counter({"recon_error", "", Better::lower, "||A - U S V^T||_F / ||A||_F"})
      .counter(
          {"ortho_error", "", Better::lower, "||Q^T Q - I||_F / sqrt(n), the worse of U and V"})
      .counter({"sigma_error", "", Better::lower,
                "max |s - s_ref| / s_ref_max against fp64 gesvd's singular values"})
      .counter({"err_sigma", "", Better::lower, "gesvdp's own error estimate"})
      .size_axis("n")
      // Default run: up to 2048 in fp32 and 1024 in fp64 (a 4096 gesvd takes seconds a run).
      .default_suite([](const Point& p) {
        return p.get_int("n") <= (p.get_dtype() == DType::fp32 ? 2048 : 1024);
      })
      .sampling(Sampling::runs_per_sample(1))  // every run needs its input restored
      .size([](const Point& p) { return std::pow(double(p.get_int("n")), 3); })
      // Four n x n operands (the pristine input, A, U, V), cuSOLVER's workspace, and the check's
      // fp64 products and reference SVD: about n^2 (8 e + 80) bytes for an element of e bytes,
      // the most the H200's pool held for any algorithm at 512 to 2048 (check included).
      .needs([](const Point& p) {
        const std::uint64_t n = p.get_int("n");
        GpuNeeds needs;
        needs.device_bytes = n * n * (8 * dtype_bytes(p.get_dtype()) + 80);
        return needs;
      })
      .make([](const Point& p) {
        return std::make_unique<Svd>(p.get_enum<SvdAlgo>("algo"), p.get_dtype(),
                                     int(p.get_int("n")));
      })
      .add();
}
CUBENCH_REGISTER(register_svd);

}  // namespace
}  // namespace cubench
