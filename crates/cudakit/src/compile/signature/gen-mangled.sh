#!/bin/sh
# Regenerates mangled.tsv: compiles CUDA-like C++ declarations with g++,
# takes the defined symbols with nm and demangles each with c++filt.
# Usage: sh gen-mangled.sh > mangled.tsv   (needs g++, nm, c++filt)
#
# Columns: mangled <TAB> c++filt's text [<TAB> unsupported]. The third column
# marks the few names that the demangler deliberately does not cover: for
# those it must answer Unknown parameters or an error, never a wrong type.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Names whose constructs are outside the kernel-parameter subset.
unsupported='
_Z8fn_ptr_kPFvfE
_Z9array_refRA4_f
_Z10member_ptrM6float4f
_Z6tagged6TaggedB2v1
_Z10tagged_ptrP6TaggedB2v1i
'

cat > "$dir/kernels.cpp" <<'CPP'
// Stand-ins for CUDA's types, laid out as the CUDA headers declare them.
struct __half { unsigned short x; };
struct __half2 { __half x, y; };
struct __nv_bfloat16 { unsigned short x; };
struct __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __half half;
struct char1 { signed char x; }; struct uchar2 { unsigned char x, y; };
struct char4 { signed char x, y, z, w; }; struct uchar4 { unsigned char x, y, z, w; };
struct short2 { short x, y; }; struct ushort4 { unsigned short x, y, z, w; };
struct int2 { int x, y; }; struct int3 { int x, y, z; }; struct int4 { int x, y, z, w; };
struct uint2 { unsigned x, y; }; struct uint3 { unsigned x, y, z; }; struct uint4 { unsigned x, y, z, w; };
struct long2 { long x, y; }; struct ulong2 { unsigned long x, y; };
struct longlong2 { long long x, y; }; struct ulonglong4 { unsigned long long x, y, z, w; };
struct float1 { float x; }; struct float2 { float x, y; };
struct float3 { float x, y, z; }; struct float4 { float x, y, z, w; };
struct double2 { double x, y; }; struct double3 { double x, y, z; }; struct double4 { double x, y, z, w; };
struct dim3 { unsigned x, y, z; };
typedef unsigned long size_t;
typedef long int64_t;
typedef unsigned char uint8_t;

// Plain C-linkage-free kernels with builtin parameters.
void k_void() {}
void k(bool) {} void k(char) {} void k(signed char) {} void k(unsigned char) {}
void k(short) {} void k(unsigned short) {} void k(int) {} void k(unsigned) {}
void k(long) {} void k(unsigned long) {} void k(long long) {} void k(unsigned long long) {}
void k(__int128) {} void k(unsigned __int128) {}
void k(float) {} void k(double) {} void k(long double) {}
void k(wchar_t) {} void k(char16_t) {} void k(char32_t) {}
void k(float*) {} void k(const float*) {} void k(volatile float*) {} void k(const volatile float*) {}
void k(double*) {} void k(const double*) {} void k(int*) {} void k(const int*) {}
void k(unsigned*) {} void k(const unsigned char*) {} void k(long long*) {}
void k(float**) {} void k(const float* const*) {} void k(float* const*) {} void k(void*) {} void k(const void*) {}
void k(float&) {} void k(const float&) {} void k(float&&) {}
void k(__half) {} void k(__half*) {} void k(const __half*) {} void k(__half2) {} void k(__half2*) {}
void k(__nv_bfloat16) {} void k(const __nv_bfloat16*) {} void k(__nv_bfloat162*) {}
void k(float4) {} void k(float4*) {} void k(const float4*) {} void k(float2) {} void k(float3*) {}
void k(double2) {} void k(const double2*) {} void k(double3) {} void k(double4*) {}
void k(int2) {} void k(int3) {} void k(int4*) {} void k(uint2) {} void k(uint3) {} void k(const uint4*) {}
void k(char1) {} void k(uchar2) {} void k(char4) {} void k(uchar4*) {} void k(short2) {} void k(ushort4) {}
void k(long2) {} void k(ulong2) {} void k(longlong2) {} void k(ulonglong4*) {} void k(float1) {}
void k(dim3) {}

// Several parameters, with substitutions of repeated types.
void saxpy(float, const float*, float*, int) {}
void daxpy(int, double, const double*, int, double*, int) {}
void copy(float*, float*, float*, size_t) {}
void copy_c(const float*, const float*, float*, int64_t) {}
void bytes(uint8_t*, const uint8_t*, size_t, size_t) {}
void vecs(float4*, const float4*, float4, float4*, int) {}
void halfs(__half*, const __half*, half, __half*, __nv_bfloat16*, const __nv_bfloat16*) {}
void mixed(float*, double*, float*, double*, const float*, const double*) {}
void ptrptr(float**, float**, const float**, const float**) {}
void refs(float&, float&, const float&, int&, int&) {}
void dims(dim3, dim3, uint3*, int3*) {}
void many(int, unsigned, long, unsigned long, long long, unsigned long long, short, unsigned short, char, signed char, unsigned char, bool) {}

struct Params { float a; int b; };
struct Other { double d; };
void with_struct(Params, Params*, const Params*, Params) {}
void two_structs(Params, Other, Other*, Params*) {}

namespace app {
  struct Params { int n; };
  void kernel(float*, int) {}
  void kernel(const app::Params*, app::Params) {}
  void uses_global(::Params, app::Params, ::Params*, app::Params*) {}
  namespace detail {
    struct Tile { int x; };
    void reduce(float*, const float*, int) {}
    void tiled(Tile, const Tile*, app::Params, Tile*) {}
    template <class T> struct Box { T v; };
    template <class T> void boxed(Box<T>, Box<T>*, const T*, T) {}
    template void boxed<float>(Box<float>, Box<float>*, const float*, float);
    template void boxed<int>(Box<int>, Box<int>*, const int*, int);
    template void boxed<float4>(Box<float4>, Box<float4>*, const float4*, float4);
  }
}
namespace {
  void anon(float*, int) {}
  struct Hidden { int h; };
  void anon_struct(Hidden, Hidden*) {}
}
void call_anon() { anon(0, 0); anon_struct(Hidden(), 0); }
static void internal_k(float*, int) {}
void call_internal() { internal_k(0, 0); }

// Templates: the signature uses T_ and substitutions of the arguments.
template <class T> void saxpy_t(T, const T*, T*, int) {}
template void saxpy_t<float>(float, const float*, float*, int);
template void saxpy_t<double>(double, const double*, double*, int);
template void saxpy_t<__half>(__half, const __half*, __half*, int);
template void saxpy_t<__nv_bfloat16>(__nv_bfloat16, const __nv_bfloat16*, __nv_bfloat16*, int);
template void saxpy_t<float4>(float4, const float4*, float4*, int);
template void saxpy_t<int>(int, const int*, int*, int);
template void saxpy_t<float*>(float*, float* const*, float**, int);
template void saxpy_t<const float*>(const float*, const float* const*, const float**, int);

template <class T, class U> void convert(const T*, U*, int, T, U) {}
template void convert<float, double>(const float*, double*, int, float, double);
template void convert<double, float>(const double*, float*, int, double, float);
template void convert<__half, float>(const __half*, float*, int, __half, float);
template void convert<int, int>(const int*, int*, int, int, int);
template void convert<float4, float2>(const float4*, float2*, int, float4, float2);

template <int N> void unrolled(float*, const float*) {}
template void unrolled<4>(float*, const float*);
template void unrolled<-8>(float*, const float*);
template void unrolled<256>(float*, const float*);
template <unsigned N> void un_u(int*) {}
template void un_u<32u>(int*);
template <long N> void un_l(int*) {}
template void un_l<7l>(int*);
template <unsigned long N> void un_ul(int*) {}
template void un_ul<1024ul>(int*);
template <long long N> void un_ll(int*) {}
template void un_ll<-5ll>(int*);
template <unsigned long long N> void un_ull(int*) {}
template void un_ull<9ull>(int*);
template <bool B> void flag(float*) {}
template void flag<true>(float*);
template void flag<false>(float*);
template <char C> void chr(char*) {}
template void chr<'A'>(char*);
template <short S> void sht(short*) {}
template void sht<3>(short*);
template <class T, int BLOCK, bool CHECK> void gemm(const T*, const T*, T*, int, int, int, T, T) {}
template void gemm<float, 128, true>(const float*, const float*, float*, int, int, int, float, float);
template void gemm<double, 64, false>(const double*, const double*, double*, int, int, int, double, double);
template void gemm<__half, 32, true>(const __half*, const __half*, __half*, int, int, int, __half, __half);

namespace blas {
  template <class T> void scal(int, T, T*) {}
  template void scal<float>(int, float, float*);
  template void scal<double>(int, double, double*);
  template <class T, int N> void axpy_n(T, const T*, T*) {}
  template void axpy_n<float, 4>(float, const float*, float*);
  template void axpy_n<double2, 2>(double2, const double2*, double2*);
  namespace v2 {
    template <class T> struct Matrix { T* data; int ld; };
    template <class T> void gemv(Matrix<T>, const T*, T*) {}
    template void gemv<float>(Matrix<float>, const float*, float*);
    template void gemv<double>(Matrix<double>, const double*, double*);
    template <class T> void mats(Matrix<T>, Matrix<T>*, const Matrix<T>*, Matrix<Matrix<T> >) {}
    template void mats<float>(Matrix<float>, Matrix<float>*, const Matrix<float>*, Matrix<Matrix<float> >);
    template <class A, class B> struct Pair { A a; B b; };
    template <class A, class B> void pairs(Pair<A, B>, Pair<B, A>*, A, B) {}
    template void pairs<int, float>(Pair<int, float>, Pair<float, int>*, int, float);
    template void pairs<float4, __half>(Pair<float4, __half>, Pair<__half, float4>*, float4, __half);
    void plain(Matrix<float>, Matrix<float>*, Matrix<int>) {}
  }
}

// Templates over user types in namespaces.
namespace geo {
  struct Point { float x, y; };
  template <class T, int D> struct Vec { T v[D]; };
  template <class T, int D> void norm(const Vec<T, D>*, T*, int) {}
  template void norm<float, 3>(const Vec<float, 3>*, float*, int);
  template void norm<double, 2>(const Vec<double, 2>*, double*, int);
  void points(Point*, const Point*, Point, Vec<float, 2>) {}
  template <class T> void fill(T*, T, size_t) {}
  template void fill<Point>(Point*, Point, size_t);
  template void fill<Vec<int, 4> >(Vec<int, 4>*, Vec<int, 4>, size_t);
}
template <class T> struct Wrap { T w; };
template <class T> void wrap(Wrap<T>, Wrap<Wrap<T> >, Wrap<T>*, T) {}
template void wrap<float>(Wrap<float>, Wrap<Wrap<float> >, Wrap<float>*, float);
template void wrap<geo::Point>(Wrap<geo::Point>, Wrap<Wrap<geo::Point> >, Wrap<geo::Point>*, geo::Point);
template <class T> void reduce_t(const T*, T*, unsigned, unsigned) {}
template void reduce_t<unsigned>(const unsigned*, unsigned*, unsigned, unsigned);
template void reduce_t<unsigned long long>(const unsigned long long*, unsigned long long*, unsigned, unsigned);
template void reduce_t<volatile float>(const volatile float*, volatile float*, unsigned, unsigned);
template <class T> void cvt(T) {}
template void cvt<const int*>(const int*);
template void cvt<const volatile double*>(const volatile double*);

// Variadic templates (a pack expands into several parameters).
template <class... Ts> void pack(Ts...) {}
template void pack<int, float>(int, float);
template void pack<float*, const double*, int>(float*, const double*, int);
template void pack<>();
template <class T, class... Ts> void pack2(T*, Ts...) {}
template void pack2<float, int, int>(float*, int, int);

// The std namespace: St, Sa, Ss abbreviations and substitutions of std names.
namespace std {
  template <class T, unsigned long N> struct array { T e[N]; };
  template <class T> struct allocator {};
  template <class C> struct char_traits {};
  template <class T> struct complex { T re, im; };
  template <class A, class B> struct pair { A first; B second; };
}
void std_array(std::array<float, 4>, std::array<float, 4>*) {}
void std_complex(std::complex<float>*, const std::complex<double>*, std::complex<float>) {}
void std_pair(std::pair<int, float>, std::pair<int, float>*) {}
void std_alloc(std::allocator<char>, std::allocator<int>) {}
namespace app { void std_in_ns(std::complex<float>*, app::Params, std::complex<float>) {} }
template <class T> void std_t(std::complex<T>*, const std::complex<T>*, T) {}
template void std_t<float>(std::complex<float>*, const std::complex<float>*, float);
template void std_t<double>(std::complex<double>*, const std::complex<double>*, double);

// Outside the subset (marked unsupported in the table).
void fn_ptr_k(void (*)(float)) {}
void array_ref(float (&)[4]) {}
void member_ptr(float float4::*) {}
struct __attribute__((abi_tag("v1"))) Tagged { int t; };
void tagged(Tagged) {}
void tagged_ptr(Tagged*, int) {}

// Enums and namespaces named like std's (cuda::std).
enum Mode { Fast, Exact };
enum class Scale : int { One };
void modes(Mode, Scale, Mode*) {}
namespace cuda { namespace std {
  template <class T> struct complex { T re, im; };
  template <class T> void cmul(complex<T>*, const complex<T>*, T) {}
  template void cmul<float>(complex<float>*, const complex<float>*, float);
} }
CPP

# std::string in both library ABIs: the old one mangles as the Ss abbreviation.
cat > "$dir/strings.cpp" <<'CPP'
#include <string>
void strings(std::string, const std::string*, std::string*) {}
CPP

g++ -std=c++17 -c "$dir/kernels.cpp" -o "$dir/kernels.o"
g++ -std=c++17 -c "$dir/strings.cpp" -o "$dir/new.o"
g++ -std=c++17 -D_GLIBCXX_USE_CXX11_ABI=0 -c "$dir/strings.cpp" -o "$dir/old.o"
{ nm --defined-only -P "$dir/kernels.o"; nm --defined-only -P "$dir/new.o" "$dir/old.o" | grep '^_Z7strings'; } \
  | awk '$1 ~ /^_Z/ && ($2 == "T" || $2 == "t" || $2 == "W") { print $1 }' \
  | sort -u \
  | while read -r sym; do
      text=$(printf '%s\n' "$sym" | c++filt)
      if printf '%s\n' "$unsupported" | grep -qx "$sym"; then
        printf '%s\t%s\tunsupported\n' "$sym" "$text"
      else
        printf '%s\t%s\n' "$sym" "$text"
      fi
    done
