// Unit tests: the Itanium parameter-list parser and the forwarding rules, on real
// mangled names (torch 2.9.1 / 2.10.0 / 2.11.0 wheels from PyPI, the sample
// stand-ins, and the pre-cxx11 spelling a torch built with
// _GLIBCXX_USE_CXX11_ABI=0 exports). Spellings are checked against
// __cxa_demangle's parameter lists.
#include "wheelfix/abi/demangle.hpp"
#include "wheelfix/abi/signature.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace wheelfix::abi;

namespace {

// c10/cuda/CUDAException.h, torch 2.9: (int32_t err, const char*, const char*, int line, bool).
constexpr const char* kCheck29 = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib";
// torch 2.10 (and 2.11, 2.12, 2.13 as released): uint32_t line_number.
constexpr const char* kCheck210 = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb";
// torch main: plus CUDAErrorLogCapture* (the sample stand-in's 2.11).
constexpr const char* kCheckLog = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbPNS0_19CUDAErrorLogCaptureE";
constexpr const char* kCxx11Check =
    "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE";
constexpr const char* kOldAbiCheck = "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs";

Signature parsed(const char* mangled) {
    auto signature = parse_signature(mangled);
    REQUIRE_MESSAGE(signature.has_value(), mangled);
    return *signature;
}

std::string joined(const Signature& signature) {
    std::string out;
    for (const Param& param : signature.params) out += (out.empty() ? "" : ", ") + param.spelling;
    return out;
}

// "ns::f(a, b) const" -> "a, b": the outermost parameter list of a demangled name.
std::string demangled_params(const char* mangled) {
    std::string text = demangle(mangled);
    for (const std::string suffix : {" &&", " &", " const"})
        if (text.ends_with(suffix)) text.erase(text.size() - suffix.size());
    int depth = 0;
    for (std::size_t i = text.size(); i-- > 0;) {
        if (text[i] == ')') ++depth;
        if (text[i] == '(' && --depth == 0) return text.substr(i + 1, text.size() - i - 2);
    }
    return "?";
}

}  // namespace

TEST_CASE("c10_cuda_check_implementation: the parameters of each torch release") {
    Signature old_signature = parsed(kCheck29);
    CHECK(old_signature.qualified_name == "c10::cuda::c10_cuda_check_implementation");
    CHECK(joined(old_signature) == "int, char const*, char const*, int, bool");
    REQUIRE(old_signature.params.size() == 5);
    CHECK(old_signature.params[0].klass == ParamClass::integer);
    CHECK(old_signature.params[0].width_bits == 32);
    CHECK(old_signature.params[0].is_signed);
    CHECK(old_signature.params[1].klass == ParamClass::pointer);
    CHECK(old_signature.params[4].klass == ParamClass::boolean);
    CHECK(joined(parsed(kCheck210)) == "int, char const*, char const*, unsigned int, bool");
    CHECK(joined(parsed(kCheckLog)) ==
          "int, char const*, char const*, unsigned int, bool, c10::cuda::CUDAErrorLogCapture*");
}

TEST_CASE("int -> unsigned int of the same width is forwardable") {
    Compatibility result = classify(parsed(kCheck29), parsed(kCheck210));
    CHECK(result.forwardable);
    CHECK(result.appended_zero_params == 0);
    CHECK(result.integer_params_before == 5);
    CHECK(result.reason == "forwardable: parameter 4 int -> unsigned int (same width)");
}

TEST_CASE("an appended CUDAErrorLogCapture* is forwardable (its value comes from a rule)") {
    Compatibility result = classify(parsed(kCheck29), parsed(kCheckLog));
    CHECK(result.forwardable);
    CHECK(result.appended_zero_params == 1);
    CHECK(result.integer_params_before == 5);
    CHECK(result.reason.find("1 appended parameter (c10::cuda::CUDAErrorLogCapture*)") !=
          std::string::npos);
    CHECK(classify(parsed(kCheck210), parsed(kCheckLog)).appended_zero_params == 1);
    // The other way round removes a parameter.
    Compatibility back = classify(parsed(kCheckLog), parsed(kCheck29));
    CHECK_FALSE(back.forwardable);
    CHECK(back.reason.find("parameters removed (c10::cuda::CUDAErrorLogCapture*)") != std::string::npos);
}

TEST_CASE("SetDevice(signed char) -> SetDevice(signed char, bool): one appended bool") {
    Signature old_signature = parsed("_ZN3c104cuda9SetDeviceEa");
    Signature new_signature = parsed("_ZN3c104cuda9SetDeviceEab");  // torch 2.9.1 as released
    CHECK(joined(old_signature) == "signed char");
    CHECK(joined(new_signature) == "signed char, bool");
    Compatibility result = classify(old_signature, new_signature);
    CHECK(result.forwardable);
    CHECK(result.appended_zero_params == 1);
    CHECK(result.integer_params_before == 1);
}

TEST_CASE("pre-cxx11 std::string (Ss) vs std::__cxx11::basic_string is not forwardable") {
    Signature old_abi = parsed(kOldAbiCheck);
    Signature cxx11 = parsed(kCxx11Check);
    CHECK(old_abi.params.back().spelling == "std::string const&");
    CHECK(old_abi.params.back().old_abi_string);
    CHECK_FALSE(old_abi.params.back().cxx11_abi_string);
    CHECK(cxx11.params.back().cxx11_abi_string);
    CHECK(cxx11.params.back().klass == ParamClass::reference);
    Compatibility result = classify(old_abi, cxx11);
    CHECK_FALSE(result.forwardable);
    CHECK(result.reason.find("std::string ABI differs") != std::string::npos);
    CHECK(result.reason.starts_with("not forwardable: parameter 4:"));
    CHECK_FALSE(classify(cxx11, old_abi).forwardable);
}

TEST_CASE("a width change, a removed parameter and a class by value are not forwardable") {
    Compatibility width = classify(parsed("_ZN3c104cuda17getStreamFromPoolEia"),  // (int, signed char)
                                   parsed("_ZN3c104cuda17getStreamFromPoolEla"));
    CHECK_FALSE(width.forwardable);
    CHECK(width.reason == "not forwardable: parameter 1: width changed: int (32-bit) -> long (64-bit)");

    Compatibility removed = classify(parsed("_ZN3c104cuda9SetDeviceEab"), parsed("_ZN3c104cuda9SetDeviceEa"));
    CHECK_FALSE(removed.forwardable);
    CHECK(removed.reason == "not forwardable: parameters removed (bool)");

    // Real overloads in libc10_cuda.so 2.9.1: getStreamFromPool(bool, signed char) and (int, signed char).
    Compatibility overload = classify(parsed("_ZN3c104cuda17getStreamFromPoolEba"),
                                      parsed("_ZN3c104cuda17getStreamFromPoolEia"));
    CHECK_FALSE(overload.forwardable);
    CHECK(overload.reason.find("register class changed: bool -> int") != std::string::npos);

    // A class by value that changed type: c10::ArrayRef<long> -> c10::ArrayRef<c10::SymInt>.
    Signature by_value = parsed("_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefIlEE");
    CHECK(by_value.params[0].klass == ParamClass::class_by_value);
    Compatibility changed =
        classify(by_value, parsed("_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefINS2_6SymIntEEE"));
    CHECK_FALSE(changed.forwardable);
    CHECK(changed.reason.find("class passed by value changed: c10::ArrayRef<long> -> c10::ArrayRef<c10::SymInt>") !=
          std::string::npos);
}

TEST_CASE("appended parameters must be zeroable and fit in registers") {
    // torch::jit::_load_for_mobile(std::string const&, std::optional<c10::Device>) and the
    // overload adding an unordered_map& (libtorch_cpu.so 2.9.1): a reference cannot be zero,
    // and a class by value before it hides the register.
    const char* load = "_ZN5torch3jit16_load_for_mobileERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt8"
                       "optionalIN3c106DeviceEE";
    const char* load_map =
        "_ZN5torch3jit16_load_for_mobileERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt8optionalIN3c106Dev"
        "iceEERSt13unordered_mapIS6_S6_St4hashIS6_ESt8equal_toIS6_ESaISt4pairIS7_S6_EEE";
    Compatibility result = classify(parsed(load), parsed(load_map));
    CHECK_FALSE(result.forwardable);
    CHECK(result.reason.find("cannot be passed as zero") != std::string::npos);

    // Seven integer registers do not fit in x86_64's six.
    Compatibility stack = classify(parsed("_Z1fiiiiii"), parsed("_Z1fiiiiiib"));
    CHECK_FALSE(stack.forwardable);
    CHECK(stack.reason.find("on the stack") != std::string::npos);
    // A double does not use an integer register.
    CHECK(classify(parsed("_Z1fiiiiid"), parsed("_Z1fiiiiidb")).forwardable);
    // A class by value before the appended one hides its register.
    CHECK_FALSE(classify(parsed("_Z1fN3c106DeviceE"), parsed("_Z1fN3c106DeviceEb")).forwardable);
}

TEST_CASE("pointer qualifiers may change, pointees may not") {
    CHECK(classify(parsed("_Z1fPc"), parsed("_Z1fPKc")).forwardable);
    CHECK(classify(parsed("_Z1fRN2at6TensorE"), parsed("_Z1fRKN2at6TensorE")).forwardable);
    Compatibility pointee = classify(parsed("_Z1fPc"), parsed("_Z1fPi"));
    CHECK_FALSE(pointee.forwardable);
    CHECK(pointee.reason.find("points to a different type") != std::string::npos);
    CHECK_FALSE(classify(parsed("_Z1fRN2at6TensorE"), parsed("_Z1fON2at6TensorE")).forwardable);
    // A const member function keeps `this` in the first register.
    Compatibility member = classify(parsed("_ZNK2at10TensorBase11remove_hookEj"),
                                    parsed("_ZNK2at10TensorBase11remove_hookEjb"));
    CHECK(member.forwardable);
    CHECK(member.integer_params_before == 2);
    // So does a constructor: the appended bool of MessageLogger goes to the fifth register.
    Compatibility constructor = classify(parsed("_ZN3c1013MessageLoggerC1EPKcii"), parsed("_ZN3c1013MessageLoggerC1EPKciib"));
    CHECK(constructor.forwardable);
    CHECK(constructor.integer_params_before == 4);
    CHECK_FALSE(classify(parsed("_ZNK2at10TensorBase11remove_hookEj"), parsed("_ZN2at10TensorBase11remove_hookEj"))
                    .forwardable);
}

TEST_CASE("names that are not functions give nullopt") {
    CHECK_FALSE(parse_signature("_ZN3c1010TensorImpl42err_msg_tensor_metadata_change_not_allowedE"));  // data
    CHECK_FALSE(parse_signature("_ZN3c1011kuint128maxE"));
    CHECK_FALSE(parse_signature("_ZTVN3c1011StorageImplE"));  // vtable
    CHECK_FALSE(parse_signature("_ZTIFvPvE"));                // typeinfo
    CHECK_FALSE(parse_signature("_ZGVZN3c104cuda9SetDeviceEabE5guard"));  // guard variable
    CHECK_FALSE(parse_signature("_ZThn8_N3c1015VariableVersion14VersionCounterD1Ev"));  // thunk
    CHECK_FALSE(parse_signature("cudaSetDevice"));
    CHECK_FALSE(parse_signature("_Z"));
    CHECK_FALSE(parse_signature("_ZN3c104cuda9SetDeviceE"));  // data named like a namespace member
    CHECK_FALSE(parse_signature("_ZN3c104cuda9SetDeviceEaS9_"));  // substitution out of range
    CHECK_FALSE(parse_signature("_ZN3c104cuda99SetDeviceEa"));   // length past the end
    std::string deep = "_Z1f";
    for (int i = 0; i < 5000; ++i) deep += "P";
    deep += "i";
    CHECK_FALSE(parse_signature(deep));  // depth is capped, no stack overflow
}

TEST_CASE("spellings agree with __cxa_demangle on real torch exports") {
    const char* names[] = {
        kCheck29,
        kCheck210,
        kCheckLog,
        kCxx11Check,
        kOldAbiCheck,
        "_ZN3c106detail14torchCheckFailEPKcS2_jS2_",
        "_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefINS2_6SymIntEEESt8optionalINS2_10ScalarTypeEES6_INS2_6Layo"
        "utEES6_INS2_6DeviceEES6_IbES6_INS2_12MemoryFormatEE",
        "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE",
        "_ZN2at6native10addbmm_outERKNS_6TensorES3_S3_RKN3c106ScalarES7_RS1_",
        "_ZN5torch3jit11pickle_loadERKSt6vectorIcSaIcEE",
        "_ZN5torch3jit15pickle_load_objESt17basic_string_viewIcSt11char_traitsIcEE",
        "_ZN3c1012WarningUtils19set_warning_handlerEPNS_14WarningHandlerE",
        "_ZNK2at6Tensor4itemIfEET_v",
        "_ZNK2at10TensorBase8data_ptrIfEEPT_v",
        "_ZN4gloo10MakeStringIJA13_ciA17_csA9_ciA2_cPcEEENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEDpRKT_",
        "_ZNSt6vectorIN3c107DataPtrESaIS1_EE17_M_realloc_insertIJRPvS6_PFvS5_ENS0_6DeviceEEEEvN9__gnu_cxx17__normal_"
        "iteratorIPS1_S3_EEDpOT_",
        "_ZN2at4cuda24getCurrentCUDABlasHandleEv",
    };
    for (const char* name : names) {
        CAPTURE(name);
        CHECK(joined(parsed(name)) == demangled_params(name));
    }
    CHECK(parsed("_ZNK2at6Tensor4itemIfEET_v").qualified_name == "at::Tensor::item<float>");
    CHECK(parsed("_ZNK2at6Tensor4itemIfEET_v").const_member);
    CHECK(parsed("_ZNK2at6Tensor4itemIfEET_v").has_this);
    // Constructors, destructors and conversions always take `this` first: torch
    // 2.10's c10::MessageLogger(const char*, int, int, bool) gained a parameter.
    auto constructor = parsed("_ZN3c1013MessageLoggerC1EPKcii");
    CHECK(constructor.has_this);
    CHECK_FALSE(constructor.const_member);
    CHECK(parsed("_ZN3c1013MessageLoggerD1Ev").has_this);
    CHECK_FALSE(parsed("_ZN3c104cuda9SetDeviceEa").has_this);
    CHECK(parsed("_ZN2at4cuda24getCurrentCUDABlasHandleEv").params.empty());
}
