import { z } from '@hono/zod-openapi';
import { ResourcesSchema } from './resources.ts';

/** A DNS name as RFC 1123 allows it: labels of letters, digits and inner hyphens, dot-separated. */
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Where an agent's node is reached: an IP address or a host name, nothing else of a URL. */
export const NodeAddressSchema = z.union([z.ipv4(), z.ipv6(), z.string().regex(HOST_NAME)], {
  error: 'must be an IP address or a host name',
});

export const GpuModelSchema = z.string().min(1).max(63);
export const LabelsSchema = z.record(z.string().max(63), z.string().max(253));

/** The most an agent's node may declare (src/policy/node-bounds.ts reads them). */
export const NodeBoundsSchema = z
  .strictObject({
    capacity: ResourcesSchema.openapi({
      description: 'the most of each dimension it may declare (a dimension left out: none of it)',
    }),
    gpu_model: GpuModelSchema.optional().openapi({
      description: 'the one GPU model it may declare (left out: none)',
    }),
    labels: LabelsSchema.optional().openapi({
      description: 'the labels it may declare, each with this value (left out: none)',
    }),
  })
  .openapi('NodeBounds');
