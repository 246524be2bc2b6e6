/*
 * test_work_classes.c - the work class of real kernel names, one operator
 * family at a time (analyzer/work_classes.c, docs/analysis.md "Work").
 *
 * The names are ones PyTorch 2.11, cuBLAS and cuDNN launched on the H200
 * (../shared/notes/h200-torch-kernel-names.txt, the recorded sessions under
 * examples/, `kaudit dump --kernels`), mangled as CUPTI reports them, or
 * demangled as they appear in profiler output for the families the recorded
 * sessions do not have.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <string.h>

#include "analysis_internal.h"

static void expect_class(const char *const *names, enum ka_class want)
{
    for (const char *const *n = names; *n; n++) {
        int got = ka_class_of_kernel_name(*n);
        cr_expect_eq(got, want, "'%.120s' is %s, not %s", *n, ka_class_name(got), ka_class_name(want));
    }
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

Test(work_classes, gemm)
{
    expect_class(NAMES("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet_sm90_hsh_8x64_64x16_2x1_v_bz_TNN",
                       "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_"
                       "alignc4_execute_kernel__5x_cublas",
                       "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_"
                       "alignc4_execute_split_k_kernel__5x_cublas",
                       "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_"
                       "segment_k_off_kernel__5x_cublas",
                       "_ZN8internal5gemvx6kernelIiiffffLb0ELb1ELb1ELb0ELi7ELb0E18cublasGemvParamsExIi30cublasGemvT"
                       "ensorStridedBatchedIKfES5_S3_IfEfEEENSt9enable_ifIXntT5_EvE4typeET11_"),
                 KA_CLASS_GEMM);
}

Test(work_classes, conv)
{
    expect_class(NAMES("sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x32x8_stage3_"
                       "warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn",
                       "sm80_xmma_fprop_implicit_gemm_indexed_wo_smem_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x"
                       "16x64_stage1_warpsize4x1x1_g1_tensor16x8x8_alignc4_execute_kernel__5x_cudnn",
                       "sm80_xmma_dgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x32x32_stage4_"
                       "warpsize4x1x1_g1_tensor16x8x16_execute_kernel__5x_cudnn",
                       "_ZN5cudnn6detail12dgrad_engineIfLi512ELi6ELi5ELi3ELi3ELi3ELb0EEEviiiPKT_iS4_iPS2_18kernel_"
                       "grad_paramsyiyifiii"),
                 KA_CLASS_CONV);
}

Test(work_classes, attention)
{
    expect_class(NAMES("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
                       "cutlass::half_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t> >, false, false, "
                       "false, false, true, true, false>(pytorch_flash::Flash_fwd_params)",
                       "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
                       "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
                 KA_CLASS_ATTENTION);
}

Test(work_classes, reductions_and_scans)
{
    expect_class(NAMES("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfNS0_13MaxNanFunct"
                       "orIfEEEEjfLi4ELi4EEEEEvT1_",
                       "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIbNS0_14func_wrapper_tIbZZZNS0_15and_ker"
                       "nel_cudaERNS_14TensorIteratorEENKUlvE_clEvENKUlvE10_clEvEUlbbE_EEjbLi4ELi4EEEEEvT1_",
                       /* torch.prod: a jiterator kernel PyTorch compiles at run time */
                       "reduction_prod_kernel",
                       "void at::native::tensor_kernel_scan_innermost_dim<float, std::plus<float> >(float*, float "
                       "const*, unsigned int, unsigned int, unsigned int, float, std::plus<float>)"),
                 KA_CLASS_REDUCTION);
}

Test(work_classes, normalization)
{
    expect_class(NAMES("_ZN2at6native33batch_norm_transform_input_kernelIN3c104HalfES3_fLb1EiEEvN5torch10headeronly6"
                       "detail27GenericPackedTensorAccessorINS6_14TensorAccessorINS2_8ArrayRefIlEEKT_Lm2ENS5_17Restri"
                       "ctPtrTraitsET3_EENS_6detail16IndexBoundsCheckILm3ESE_EESC_Lm3ESD_SE_EE",
                       "_ZN2at6native36batch_norm_collect_statistics_kernelINS0_3VarEN3c104HalfES4_fiEEvN5torch10head"
                       "eronly6detail27GenericPackedTensorAccessorINS7_14TensorAccessorINS3_8ArrayRefIlEEKT0_Lm2E",
                       "_ZN2at6native49_GLOBAL__N__0edc5583_16_Normalization_cu_5c38458745unrolled_elementwise_kernel"
                       "_for_multi_outputsILi3EZZZNS1_34batch_norm_update_stats_and_invertERKNS_6TensorES5_S5_S5_ddlE",
                       "_ZN5cudnn24bn_fw_tr_1C11_singlereadIfLi512ELb1ELi1ELi2ELi0EEEvNS_18bn_fw_tr_1C11_argsIT_EE",
                       "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, "
                       "float const*, float const*, float const*, float*, float*, float*)"),
                 KA_CLASS_NORMALIZATION);
}

Test(work_classes, pooling)
{
    expect_class(NAMES("void at::native::(anonymous namespace)::max_pool3d_with_indices_single_out_frame<float>(float "
                       "const*, float*, long*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, "
                       "int, int, int, int, int)",
                       "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, "
                       "long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
                       "void at::native::(anonymous namespace)::avg_pool2d_out_cuda_frame<float, float>(int, float "
                       "const*, long, long, long, long, long, int, int, int, int, int, int, float*, int, bool, bool)",
                       "void at::native::(anonymous namespace)::adaptive_average_pool<float>(float const*, float*, "
                       "int, int, int, int, long, long, long)"),
                 KA_CLASS_POOLING);
}

Test(work_classes, softmax)
{
    expect_class(NAMES("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, "
                       "float const*, int, int, int, bool const*, int, bool)",
                       "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                       "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
                       "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                       "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)"),
                 KA_CLASS_SOFTMAX);
}

Test(work_classes, elementwise_math_is_not_glue)
{
    expect_class(NAMES(/* issue 13: "nocast" does not make a multiply a cast */
                       "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::Bi"
                       "naryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>>(at::Tensor"
                       "IteratorBase&, ...)::{lambda(int)#1}>(int, ...)",
                       "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_15CUDAFunctor_a"
                       "ddIfEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
                       "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_internal"
                       "10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_",
                       "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEv"
                       "iT0_T1_",
                       "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EEEEviT0_T1_",
                       "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_49_GLOBAL__N__d2ba64fb_16_TensorCompa"
                       "re_cu_71e06f4e19launch_clamp_scalarERNS_18TensorIteratorBaseEN3c106ScalarES6_NS0_6detail11Cla"
                       "mpLimitsEENKUlvE_clEvENKUlvE5_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_"),
                 KA_CLASS_ELEMENTWISE);
}

Test(work_classes, glue)
{
    expect_class(NAMES("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
                       "_ZN2at6native29vectorized_elementwise_kernelILi8EZNS0_24float16_copy_kernel_cudaERNS_18Tensor"
                       "IteratorBaseEEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
                       "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::di"
                       "rect_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}"
                       "::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, ...)::{lambda(int)#1}>(int, ...)",
                       "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)"
                       "::OpaqueType<4u>, unsigned int, 2, 128, 1>(...)",
                       "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<...>(...)",
                       "_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1EL21cudnnKernelDataType_t2EEEvNS0_"
                       "18nchw2nhwc_params_tIT1_EEPKT_PT0_",
                       "_ZN5cudnn19engines_precompiled16nhwcToNchwKernelIfffLb1ELb0EL21cudnnKernelDataType_t0EEEvNS0_"
                       "18nhwc2nchw_params_tIT1_EEPKT_PT0_",
                       "_ZN50_GLOBAL__N__fa15d16e_17_RangeFactories_cu_38772b0829elementwise_kernel_with_indexIiZZZN2"
                       "at6native15arange_cuda_outERKN3c106ScalarES6_S6_RNS1_6TensorEENKUlvE_clEvENKUlvE1_clEvEUllE_"
                       "EEvlT0_",
                       /* RNG initialization */
                       "_ZN2at6native54_GLOBAL__N__d8ceb000_21_DistributionNormal_cu_0c5b6e8543distribution_elementwi"
                       "se_grid_stride_kernelIfLi4E"),
                 KA_CLASS_GLUE);
}

Test(work_classes, words_match_whole_tokens_only)
{
    /* a word inside another word says nothing */
    cr_expect_eq(ka_class_of_kernel_name("nocast_kernel"), KA_CLASS_OTHER);
    cr_expect_eq(ka_class_of_kernel_name("broadcast_kernel"), KA_CLASS_OTHER);
    cr_expect_eq(ka_class_of_kernel_name("kaudit_scale_add"), KA_CLASS_OTHER);
    cr_expect_eq(ka_class_of_kernel_name("converter_kernel"), KA_CLASS_OTHER);
    cr_expect_eq(ka_class_of_kernel_name("cast_kernel"), KA_CLASS_GLUE);
}

Test(work_classes, new_classes_are_named_and_parse)
{
    const char *names[] = { "pooling", "normalization", "softmax" };
    enum ka_class want[] = { KA_CLASS_POOLING, KA_CLASS_NORMALIZATION, KA_CLASS_SOFTMAX };
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(ka_class_parse(names[i]), (int)want[i]);
        cr_expect_str_eq(ka_class_name(want[i]), names[i]);
    }
    /* the classes the contracts already use keep their names */
    const char *old[] = { "gemm", "conv", "attention", "reduction", "elementwise", "glue", "other" };
    for (int i = 0; i < 7; i++)
        cr_expect_geq(ka_class_parse(old[i]), 0, "%s", old[i]);
}

/* Normalization and softmax were reductions: a contract forbidding reductions still forbids them. */
Test(work_classes, forbidding_reductions_forbids_normalization_and_softmax)
{
    static const char text[] = "{\"kaudit_contract\": 1, \"task_id\": \"t/x\","
                               " \"implementation\": {\"self_implemented\": true, \"forbidden\": [\"reduction\"]},"
                               " \"reference_work\": {\"dominant_class\": \"reduction\", \"amount\": 1024}}";
    static const char dflt[] = "{\"kaudit_contract\": 1, \"task_id\": \"t/y\","
                               " \"implementation\": {\"self_implemented\": true},"
                               " \"reference_work\": {\"dominant_class\": \"pooling\", \"amount\": 1024}}";
    struct ka_contract *c;
    char err[1024];
    cr_assert_eq(ka_contract_parse(text, strlen(text), "x.json", &c, err, sizeof err), 0, "%s", err);
    cr_expect(c->forbidden & (1u << KA_CLASS_NORMALIZATION));
    cr_expect(c->forbidden & (1u << KA_CLASS_SOFTMAX));
    cr_expect(!(c->forbidden & (1u << KA_CLASS_POOLING)));
    ka_contract_free(c);
    cr_assert_eq(ka_contract_parse(dflt, strlen(dflt), "y.json", &c, err, sizeof err), 0, "%s", err);
    cr_expect(c->forbidden & (1u << KA_CLASS_POOLING));
    cr_expect_eq(c->dominant_class, KA_CLASS_POOLING);
    ka_contract_free(c);
}

/* ---- ATen operators (ka_class_of_operator): the messages PyTorch's NVTX mode writes ---- */

static void expect_operator(const char *const *messages, int want)
{
    for (const char *const *m = messages; *m; m++) {
        int got = ka_class_of_operator(*m);
        cr_expect_eq(got, want, "'%s' is %s, not %s", *m, got < 0 ? "none" : ka_class_name(got),
                     want < 0 ? "none" : ka_class_name(want));
    }
}

Test(operators, one_family_at_a_time)
{
    expect_operator(NAMES("aten::mm, seq = 2, op_id = 4, sizes = [[64, 512], [512, 512]]",
                          "aten::addmm, op_id = 3, sizes = [[512], [64, 512], [512, 512], [], []]", "aten::bmm",
                          "aten::linear, op_id = 1, sizes = [[64, 512], [512, 512], [512]]", "aten::_scaled_mm"),
                    KA_CLASS_GEMM);
    expect_operator(NAMES("aten::cudnn_convolution, op_id = 9", "aten::_convolution", "aten::conv2d",
                          "aten::slow_conv3d_forward"),
                    KA_CLASS_CONV);
    expect_operator(NAMES("aten::_scaled_dot_product_flash_attention, op_id = 2", "aten::scaled_dot_product_attention",
                          "aten::_efficient_attention_forward"),
                    KA_CLASS_ATTENTION);
    expect_operator(NAMES("aten::native_layer_norm", "aten::cudnn_batch_norm", "aten::_batch_norm_impl_index",
                          "aten::native_group_norm", "aten::rms_norm"),
                    KA_CLASS_NORMALIZATION);
    expect_operator(NAMES("aten::_softmax", "aten::log_softmax", "aten::_log_softmax"), KA_CLASS_SOFTMAX);
    expect_operator(NAMES("aten::max_pool3d_with_indices, op_id = 5, sizes = [[16, 32, 64, 64, 64], [], [], [], [], []]",
                          "aten::avg_pool2d", "aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d"),
                    KA_CLASS_POOLING);
    expect_operator(NAMES("aten::topk, op_id = 7, sizes = [[4096, 8192], [], [], [], []]", "aten::sort", "aten::prod",
                          "aten::sum", "aten::max", "aten::argmax", "aten::cumsum", "aten::logsumexp",
                          "aten::linalg_vector_norm"),
                    KA_CLASS_REDUCTION);
    expect_operator(NAMES("aten::mul, seq = 0, op_id = 2, sizes = [[4096, 4096], []]", "aten::add_", "aten::relu_",
                          "aten::gelu", "aten::where", "aten::maximum", "aten::bitwise_and", "aten::_foreach_add_"),
                    KA_CLASS_ELEMENTWISE);
    expect_operator(NAMES("aten::copy_", "aten::fill_", "aten::zero_", "aten::cat", "aten::index_select",
                          "aten::_index_put_impl_", "aten::contiguous", "aten::_to_copy", "aten::empty_strided",
                          "aten::constant_pad_nd", "aten::reflection_pad2d"),
                    KA_CLASS_GLUE);
}

Test(operators, only_aten_ranges_are_operators)
{
    expect_operator(NAMES("candidate", "ModelNew.forward (<string>)", "aten", "aten::", "aten::no_such_operator",
                          "prim::PythonOp", "Aten::mm"),
                    -1);
    cr_expect(ka_is_operator_message("aten::mm, op_id = 1"));
    cr_expect(!ka_is_operator_message("candidate"));
    cr_expect(!ka_is_operator_message(NULL));
}

Test(operators, never_override_a_specific_compute_name_nor_make_glue)
{
    /* a name that says nothing, or only a generic launcher: the operator names the work */
    cr_expect_eq(ka_refine_class(KA_CLASS_OTHER, KA_NAME_UNKNOWN, KA_CLASS_REDUCTION), KA_CLASS_REDUCTION);
    cr_expect_eq(ka_refine_class(KA_CLASS_ELEMENTWISE, KA_NAME_GENERIC, KA_CLASS_POOLING), KA_CLASS_POOLING);
    /* glue by name, compute by operator (gatherTopK is topk's): the operator */
    cr_expect_eq(ka_refine_class(KA_CLASS_GLUE, KA_NAME_SPECIFIC, KA_CLASS_REDUCTION), KA_CLASS_REDUCTION);
    /* a specific compute name keeps its class whatever range is around it (a range the candidate wrote) */
    cr_expect_eq(ka_refine_class(KA_CLASS_REDUCTION, KA_NAME_SPECIFIC, KA_CLASS_ELEMENTWISE), KA_CLASS_REDUCTION);
    cr_expect_eq(ka_refine_class(KA_CLASS_GEMM, KA_NAME_SPECIFIC, KA_CLASS_SOFTMAX), KA_CLASS_GEMM);
    /* an operator never makes a kernel glue */
    cr_expect_eq(ka_refine_class(KA_CLASS_OTHER, KA_NAME_UNKNOWN, KA_CLASS_GLUE), KA_CLASS_OTHER);
    cr_expect_eq(ka_refine_class(KA_CLASS_ELEMENTWISE, KA_NAME_GENERIC, KA_CLASS_GLUE), KA_CLASS_ELEMENTWISE);
    cr_expect_eq(ka_refine_class(KA_CLASS_OTHER, KA_NAME_UNKNOWN, -1), KA_CLASS_OTHER);
}

Test(operators, name_strength)
{
    int strength;
    cr_expect_eq(ka_kernel_name_class("_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_23gpu_kernel_impl_"
                                      "nocastIZZZNS0_12_GLOBAL__N_116sort_kernelEvE_clEvEUlfE_EEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT0_T1_",
                                      &strength),
                 KA_CLASS_ELEMENTWISE);
    cr_expect_eq(strength, KA_NAME_GENERIC);
    cr_expect_eq(ka_kernel_name_class("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7func_wrapper_tI"
                                      "fZNS0_11sum_functorIfffEclERNS_18TensorIteratorEEUlffE_EEjfLi4ELi4EEEEEvT1_",
                                      &strength),
                 KA_CLASS_REDUCTION);
    cr_expect_eq(strength, KA_NAME_SPECIFIC);
    cr_expect_eq(ka_kernel_name_class("_ZN2at6native6bitonicSortKVInPlaceILi2ELin1ELi16ELi16EffNS0_10GTOp", &strength),
                 KA_CLASS_OTHER);
    cr_expect_eq(strength, KA_NAME_UNKNOWN);
}

Test(operators, work_from_sizes)
{
    const char *unit;
    cr_expect_float_eq(ka_operator_work("aten::mm, op_id = 4, sizes = [[64, 512], [512, 256]]", KA_CLASS_GEMM, &unit),
                       2.0 * 64 * 512 * 256, 1e-9);
    cr_expect_str_eq(unit, "flop");
    cr_expect_float_eq(ka_operator_work("aten::addmm, sizes = [[256], [64, 512], [512, 256], [], []]", KA_CLASS_GEMM,
                                        &unit),
                       2.0 * 64 * 512 * 256, 1e-9);
    cr_expect_float_eq(ka_operator_work("aten::bmm, sizes = [[8, 64, 512], [8, 512, 32]]", KA_CLASS_GEMM, &unit),
                       2.0 * 8 * 64 * 512 * 32, 1e-9);
    cr_expect_float_eq(ka_operator_work("aten::linear, op_id = 1, sizes = [[64, 512], [128, 512], [128]]",
                                        KA_CLASS_GEMM, &unit),
                       2.0 * 64 * 512 * 128, 1e-9);
    cr_expect_float_eq(ka_operator_work("aten::topk, op_id = 7, sizes = [[4096, 8192], [], [], [], []]",
                                        KA_CLASS_REDUCTION, &unit),
                       4096.0 * 8192, 1e-9);
    cr_expect_str_eq(unit, "element");
    /* a list of tensors is no shape; no sizes, no estimate; convolutions need strides */
    cr_expect_float_eq(ka_operator_work("aten::cat, sizes = [[[4, 4], [4, 4]], []]", KA_CLASS_GLUE, &unit), 0, 1e-9);
    cr_expect_float_eq(ka_operator_work("aten::mm, op_id = 4", KA_CLASS_GEMM, &unit), 0, 1e-9);
    cr_expect_float_eq(ka_operator_work("aten::conv2d, sizes = [[1, 3, 8, 8], [4, 3, 3, 3]]", KA_CLASS_CONV, &unit), 0,
                       1e-9);
    cr_expect_float_eq(ka_operator_work("aten::_addmm_activation, sizes = [[256], [64, 512], [512, 256], [], [], []]",
                                        KA_CLASS_GEMM, &unit),
                       2.0 * 64 * 512 * 256, 1e-9);
    cr_expect_float_eq(ka_operator_work("aten::outer, sizes = [[300], [200]]", KA_CLASS_GEMM, &unit), 300.0 * 200, 1e-9);
    /* sizes that overflow a double give no estimate, never inf */
    cr_expect_float_eq(ka_operator_work("aten::mul, sizes = [[1e308, 1e308], []]", KA_CLASS_ELEMENTWISE, &unit), 0, 1e-9);
    cr_expect_float_eq(ka_operator_work("aten::mm, sizes = [[1e308, 1e308], [1e308, 1e308]]", KA_CLASS_GEMM, &unit), 0,
                       1e-9);
    /* malformed sizes end the parse, never run past the text */
    cr_expect_float_eq(ka_operator_work("aten::mul, sizes = [[4096, 40", KA_CLASS_ELEMENTWISE, &unit), 4096.0 * 40,
                       1e-9);
    cr_expect_float_eq(ka_operator_work("aten::mul, sizes = [[x]]", KA_CLASS_ELEMENTWISE, &unit), 0, 1e-9);
}

Test(work_classes, pytorchs_cub_is_framework_code)
{
    /* recorded on the H200 under torch.topk: PyTorch's own copy of CUB (namespace at_cuda_detail) */
    cr_expect(ka_is_framework_kernel_name("_ZN14at_cuda_detail3cub6detail11scan_by_key21DeviceScanByKeyKernelINS2_"
                                          "10policy_hubIN6thrust45THRUST_300001_SM_750_800_860_900_1000_1200_NS18"));
    cr_expect(!ka_is_framework_kernel_name("_ZN3cub6detail11scan_by_key21DeviceScanByKeyKernel"));
}
