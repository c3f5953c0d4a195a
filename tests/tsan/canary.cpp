// scripts/tsan.sh's canary: a functor that races (every iteration adds to one int), run by
// Thrust's OpenMP system like the pipeline's functors. ThreadSanitizer must report it; if it does
// not, the set-up (instrumentation, Archer, the OpenMP runtime) cannot be trusted to find races.
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system/omp/execution_policy.h>

#include <cstdio>

struct Racy {
  int* shared;
  void operator()(int i) const { shared[0] += i; }
};

int main() {
  int sum = 0;
  thrust::for_each(thrust::omp::par, thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(100000),
                   Racy{&sum});
  std::printf("%d\n", sum);
  return 0;
}
