/**
 * The published placement curves on the same pods and cluster, with GPU sharing: FGD and two of its
 * baselines, from the FGD authors' simulator ("Beware of Fragmentation", USENIX ATC'23), file
 * experiments/analysis/expected_results/analysis_allo_discrete.csv of hkust-adsl/
 * kubernetes-scheduler-simulator at commit 1853fc0e79d74778719c8137d7ca31dd61729e4f, workload
 * openb_pod_list_default, the mean of its seeds 42-51, as [arrived GPU requests, GPUs not allocated]
 * in % of the cluster's 6,212 GPUs (100 minus the allocation rate the file gives).
 */
export const FGD_PUBLISHED: Record<string, readonly (readonly [number, number])[]> = {
  'FGD (published)': [
    [0, 99.75],
    [10, 89.99],
    [20, 80.0],
    [30, 69.98],
    [40, 59.99],
    [50, 49.99],
    [60, 40.0],
    [70, 30.0],
    [80, 19.98],
    [85, 14.98],
    [90, 10.02],
    [92, 8.02],
    [94, 6.01],
    [96, 4.81],
    [98, 4.79],
    [100, 4.77],
  ],
  'BestFit (published)': [
    [0, 99.75],
    [10, 89.99],
    [20, 80.0],
    [30, 69.98],
    [40, 59.99],
    [50, 49.99],
    [60, 40.0],
    [70, 30.0],
    [80, 19.98],
    [85, 14.98],
    [90, 10.01],
    [92, 8.0],
    [94, 7.19],
    [96, 7.17],
    [98, 7.15],
    [100, 7.14],
  ],
  'DotProd (published)': [
    [0, 99.75],
    [10, 89.99],
    [20, 80.0],
    [30, 69.98],
    [40, 59.99],
    [50, 49.99],
    [60, 40.0],
    [70, 30.0],
    [80, 19.98],
    [85, 14.98],
    [90, 10.02],
    [92, 9.44],
    [94, 9.43],
    [96, 9.41],
    [98, 9.39],
    [100, 9.38],
  ],
};
