// The typed Versa API client, for Node scripts and the web pages alike (see README.md).
export { ApiError, createClient, describeDetail, urlOf, type ApiResponse, type Args, type Answer, type CallOptions, type ClientOptions, type VersaClient } from './client.js';
export type { Item, Method, PathParamsOf, PathWith, QueryOf, RequestOf, ResponseOf, components, operations, paths } from './types.js';
export { OPERATIONS } from './operations.js';
export type { OperationAnswer, OperationArgs, OperationId } from './client.js';
