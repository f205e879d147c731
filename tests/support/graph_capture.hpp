// A CUDA graph captured from a stream, for the tests that check calls inside graphs: the
// capture begins with the object and ends at end(), which also instantiates the graph; replay()
// launches it on the stream and waits for it. Graph and executable die with the object, and a
// capture still open (a failed assertion on the way) is ended first.
#pragma once

#include <cuda_runtime_api.h>

#include "check_cuda.hpp"

namespace xgemv_test {

class GraphCapture {
 public:
  GraphCapture(cudaStream_t stream, cudaStreamCaptureMode mode) : stream_(stream) {
    check_cuda(cudaStreamBeginCapture(stream, mode), "cudaStreamBeginCapture");
  }
  ~GraphCapture() {
    if (capturing_) cudaStreamEndCapture(stream_, &graph_);
    if (executable_ != nullptr) cudaGraphExecDestroy(executable_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
  }
  GraphCapture(const GraphCapture &) = delete;
  GraphCapture &operator=(const GraphCapture &) = delete;

  // Ends the capture; where it succeeded, instantiates the graph. The capture's own status:
  // what the calls captured did to it.
  cudaError_t end() {
    capturing_ = false;
    const cudaError_t captured = cudaStreamEndCapture(stream_, &graph_);
    if (captured == cudaSuccess)
      check_cuda(cudaGraphInstantiate(&executable_, graph_, 0), "cudaGraphInstantiate");
    return captured;
  }
  cudaGraph_t graph() const { return graph_; }

  // Launches the instantiated graph on the stream and waits for it.
  void replay() const {
    check_cuda(cudaGraphLaunch(executable_, stream_), "cudaGraphLaunch");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  cudaStream_t stream_;
  bool capturing_ = true;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t executable_ = nullptr;
};

}  // namespace xgemv_test
