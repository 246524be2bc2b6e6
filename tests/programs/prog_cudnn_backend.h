/*
 * prog_cudnn_backend.h - a cuDNN v9 backend convolution as an application
 * builds one (tensors, convolution, operation, graph, heuristics, plan,
 * variant pack, execute), for the stand-in test programs:
 * N=1 C=2 H=W=6, K=3 R=S=3, pad 0, stride 1, float, NCHW packed.
 */
#ifndef PROG_CUDNN_BACKEND_H
#define PROG_CUDNN_BACKEND_H

#include <cudnn.h>

#include "prog_common.h"

static cudnnBackendDescriptor_t be_tensor(int64_t uid, const int64_t dims[4])
{
    cudnnBackendDescriptor_t t;
    int64_t strides[4] = { dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1 };
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int64_t align = 16;
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
    CHECK_STATUS(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
    CHECK_STATUS(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    CHECK_STATUS(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    CHECK_STATUS(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    CHECK_STATUS(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
    CHECK_STATUS(cudnnBackendFinalize(t));
    return t;
}

static void backend_conv(cudnnHandle_t h, void *x, void *w, void *y)
{
    const int64_t xd[4] = { 1, 2, 6, 6 }, wd[4] = { 3, 2, 3, 3 }, yd[4] = { 1, 3, 4, 4 };
    cudnnBackendDescriptor_t tx = be_tensor('x', xd), tw = be_tensor('w', wd), ty = be_tensor('y', yd);

    cudnnBackendDescriptor_t conv;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t spatial = 2, one[2] = { 1, 1 }, zero[2] = { 0, 0 };
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv));
    CHECK_STATUS(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
    CHECK_STATUS(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1,
                                          &mode));
    CHECK_STATUS(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial));
    CHECK_STATUS(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one));
    CHECK_STATUS(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one));
    CHECK_STATUS(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, zero));
    CHECK_STATUS(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, zero));
    CHECK_STATUS(cudnnBackendFinalize(conv));

    cudnnBackendDescriptor_t op;
    float alpha = 1.0f, beta = 0.0f;
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op));
    CHECK_STATUS(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tx));
    CHECK_STATUS(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tw));
    CHECK_STATUS(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ty));
    CHECK_STATUS(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
    CHECK_STATUS(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1,
                                          &alpha));
    CHECK_STATUS(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1,
                                          &beta));
    CHECK_STATUS(cudnnBackendFinalize(op));

    cudnnBackendDescriptor_t graph;
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    CHECK_STATUS(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
    CHECK_STATUS(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                          &op));
    CHECK_STATUS(cudnnBackendFinalize(graph));

    cudnnBackendDescriptor_t heur;
    cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_INSTANT;
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    CHECK_STATUS(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
    CHECK_STATUS(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm));
    CHECK_STATUS(cudnnBackendFinalize(heur));
    int64_t count = 0;
    CHECK_STATUS(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                          &count, NULL));
    if (count < 1) {
        fprintf(stderr, "no engine config\n");
        exit(2);
    }
    cudnnBackendDescriptor_t cfg;
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg));
    CHECK_STATUS(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                          &count, &cfg));

    cudnnBackendDescriptor_t plan;
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    CHECK_STATUS(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
    CHECK_STATUS(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg));
    CHECK_STATUS(cudnnBackendFinalize(plan));

    cudnnBackendDescriptor_t pack;
    int64_t uids[3] = { 'x', 'w', 'y' };
    void *ptrs[3] = { x, w, y };
    void *workspace = NULL;
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    CHECK_STATUS(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids));
    CHECK_STATUS(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs));
    CHECK_STATUS(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                          &workspace));
    CHECK_STATUS(cudnnBackendFinalize(pack));

    CHECK_STATUS(cudnnBackendExecute(h, plan, pack));

    cudnnBackendDescriptor_t all[] = { pack, plan, cfg, heur, graph, op, conv, tx, tw, ty };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_STATUS(cudnnBackendDestroyDescriptor(all[i]));
}

#endif
