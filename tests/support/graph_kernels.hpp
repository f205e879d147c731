// The largest grid.y among a CUDA graph's kernel nodes: for xgemv's kernels, the count of splits
// of a split reduction (1: not split). Read with the driver's cuGraphKernelNodeGetParams: the
// runtime's cudaGraphKernelNodeGetParams knows only the kernels of its own copy of the runtime,
// and libxgemv and the drop-in carry their own ("invalid device function" for theirs). The
// driver function comes through the runtime, so that the test program still starts (and skips)
// on a machine without a driver.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace xgemv_test {

// 0 where the graph's nodes cannot be read.
inline unsigned largest_grid_y(cudaGraph_t graph) {
  size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) != cudaSuccess) return 0;
  std::vector<cudaGraphNode_t> nodes(count);
  if (cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess) return 0;
  using GetParams = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS *);
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuGraphKernelNodeGetParams", &function, 12000,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return 0;
  const auto get_params = reinterpret_cast<GetParams>(function);
  unsigned largest = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    if (cudaGraphNodeGetType(node, &type) != cudaSuccess) return 0;
    if (type != cudaGraphNodeTypeKernel) continue;
    CUDA_KERNEL_NODE_PARAMS params{};
    if (get_params(node, &params) != CUDA_SUCCESS) return 0;
    largest = std::max(largest, params.gridDimY);
  }
  return largest;
}

}  // namespace xgemv_test
