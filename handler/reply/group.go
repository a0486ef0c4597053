package reply

// FAQSuffix is what RocketMQ's FAQUrl.suggestTodo appends to a few
// remarks (common/.../help/FAQUrl.java).
const FAQSuffix = "\nSee https://rocketmq.apache.org/docs/faq/ for further details."

// GroupNotExistRemark is the remark of SUBSCRIPTION_GROUP_NOT_EXIST (26)
// that POP, PULL, PEEK, NOTIFICATION and POLLING_INFO give for a group that
// does not exist and may not be auto-created
// (PopMessageProcessor/PullMessageProcessor).
func GroupNotExistRemark(group string) string {
	return "subscription group [" + group + "] does not exist, " + FAQSuffix
}

// GroupNoPermissionRemark is the remark of NO_PERMISSION (16) for a group
// whose consumeEnable is false.
func GroupNoPermissionRemark(group string) string {
	return "subscription group no permission, " + group
}
